//! Physical units to cycles and flits.
//!
//! One cycle is the time a link needs to move one flit. Scenario values are physical (ns, us, ms,
//! s; B, KB, MB; Gb/s; metres of cable at a propagation delay per metre) and are converted once, at
//! load. Times round to the nearest cycle; sizes round up to whole flits.
//!
//! Every time is at most [`MAX_CYCLES`] cycles and every size at most [`MAX_FLITS`] flits; a
//! value beyond is an error, never saturated.

use std::fmt;

/// A number as an error message shows it: as Rust prints it, or in scientific notation when that
/// runs past 21 characters (`1e308`, not 309 digits).
pub fn shown(v: f64) -> String {
    let plain = v.to_string();
    match plain.len() > 21 {
        true => format!("{v:e}"),
        false => plain,
    }
}

/// Flit size and link rate: what one cycle means.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeBase {
    /// Bytes per flit (64: the InfiniBand credit block).
    pub flit_bytes: u32,
    /// Link rate in Gb/s.
    pub link_gbps: f64,
}

/// Longest time a scenario may give, in cycles: 2^40 (about 94 minutes of simulated time at
/// 5.12 ns per cycle). Cycle counts are 64-bit; this ceiling keeps every sum the model makes of
/// them (a start plus a duration, a cycle plus a link latency or a timer, flit counts of up to
/// 49,152 nodes) far below 2^64, and is far beyond any run that finishes.
pub const MAX_CYCLES: u64 = 1 << 40;

/// Largest size a scenario may give, in flits: 2^32 - 1 (message sizes are 32-bit).
pub const MAX_FLITS: u64 = u32::MAX as u64;

/// Largest phase flow, in bytes: 2^40 (1 TiB). At 64-byte flits that is 2^34 flits, and at line
/// rate 2^34 cycles, below the longest time.
pub const MAX_FLOW_BYTES: u64 = 1 << 40;

/// A value that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError(pub String);

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Default for TimeBase {
    fn default() -> Self {
        TimeBase {
            flit_bytes: 64,
            link_gbps: 100.0,
        }
    }
}

fn split_number(text: &str) -> Result<(f64, &str), UnitError> {
    let t = text.trim();
    let end = t
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '_' || c == 'e' || c == '-' || c == '+')
        })
        .unwrap_or(t.len());
    // An exponent marker must be followed by digits; "e" alone belongs to the unit.
    let (num, unit) = t.split_at(end);
    // As in TOML's numbers, an underscore stands between two digits (`1_000us`).
    let b = num.as_bytes();
    let lone = |i: usize| {
        i > 0 && i + 1 < b.len() && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit()
    };
    if (0..b.len()).any(|i| b[i] == b'_' && !lone(i)) {
        return Err(UnitError(format!(
            "`{text}`: an underscore in a number stands between two digits (`1_000us`)"
        )));
    }
    let num: String = num.chars().filter(|&c| c != '_').collect();
    let v: f64 = num
        .parse()
        .map_err(|_| UnitError(format!("`{text}` does not start with a number")))?;
    if !v.is_finite() || v < 0.0 {
        return Err(UnitError(format!(
            "`{text}` must be a finite, non-negative quantity"
        )));
    }
    Ok((v, unit.trim()))
}

/// A time (`30ns`, `5us`, `3 ms`, `0.12s`) in nanoseconds.
pub fn nanoseconds(text: &str) -> Result<f64, UnitError> {
    let (v, unit) = split_number(text)?;
    match unit {
        "ps" => Ok(v / 1000.0),
        "ns" => Ok(v),
        "us" | "µs" => Ok(v * 1e3),
        "ms" => Ok(v * 1e6),
        "s" => Ok(v * 1e9),
        "" => Err(UnitError(format!(
            "`{text}` has no unit; write a time such as `30ns`, `5us` or `3ms`"
        ))),
        u => Err(UnitError(format!(
            "`{text}`: `{u}` is not a time unit (ps, ns, us, ms, s)"
        ))),
    }
}

impl TimeBase {
    /// Nanoseconds per cycle.
    pub fn cycle_ns(&self) -> f64 {
        self.flit_bytes as f64 * 8.0 / self.link_gbps
    }

    /// A time (`30ns`, `5us`, `3 ms`, `0.12s`) in cycles, rounded to the nearest.
    pub fn cycles(&self, text: &str) -> Result<u64, UnitError> {
        let c = (nanoseconds(text)? / self.cycle_ns()).round();
        if c > MAX_CYCLES as f64 {
            return Err(UnitError(format!(
                "`{text}` is beyond the longest time, 2^40 cycles ({:.0} s at {} ns per cycle)",
                MAX_CYCLES as f64 * self.cycle_ns() / 1e9,
                self.cycle_ns()
            )));
        }
        Ok(c as u64)
    }

    /// A size in whole bytes (`64B`, `4KB`), for the flit itself: no `flits` unit, no fraction of
    /// a byte.
    pub fn bytes(text: &str) -> Result<u64, UnitError> {
        let (v, unit) = split_number(text)?;
        if unit.starts_with("flit") {
            return Err(UnitError(format!(
                "`{text}`: a flit's size is given in bytes (B, KB)"
            )));
        }
        let one = TimeBase {
            flit_bytes: 1,
            link_gbps: 100.0,
        };
        let scale = match unit {
            "KB" | "KiB" => 1024.0,
            "MB" | "MiB" => 1024.0 * 1024.0,
            _ => 1.0,
        };
        if (v * scale).fract() != 0.0 {
            return Err(UnitError(format!(
                "`{text}` is not a whole number of bytes"
            )));
        }
        one.flits(text)
    }

    /// The size of a phase flow (`12.5MB`, `4KB`, `100B`, `2GB`) in whole bytes, at most
    /// [`MAX_FLOW_BYTES`]. KB is 1024 bytes, MB 1024 KB, GB 1024 MB.
    pub fn flow_bytes(text: &str) -> Result<u64, UnitError> {
        let (v, unit) = split_number(text)?;
        let scale = match unit {
            "B" => 1.0,
            "KB" | "KiB" => 1024.0,
            "MB" | "MiB" => 1024.0 * 1024.0,
            "GB" | "GiB" => 1024.0 * 1024.0 * 1024.0,
            "" => {
                return Err(UnitError(format!(
                    "`{text}` has no unit; write a size such as `12.5MB`, `4KB` or `100B`"
                )));
            }
            u => {
                return Err(UnitError(format!(
                    "`{text}`: `{u}` is not a size unit of a flow (B, KB, MB, GB)"
                )));
            }
        };
        let bytes = v * scale;
        if bytes > MAX_FLOW_BYTES as f64 {
            return Err(UnitError(format!(
                "`{text}` is beyond the largest flow, 2^40 bytes (1 TiB, some 90 s at 100 Gb/s)"
            )));
        }
        if bytes.fract() != 0.0 {
            return Err(UnitError(format!(
                "`{text}` is not a whole number of bytes"
            )));
        }
        Ok(bytes as u64)
    }

    /// A size (`64B`, `4KB`, `344 KB`, `1MB`) in flits, rounded up. KB is 1024 bytes.
    pub fn flits(&self, text: &str) -> Result<u64, UnitError> {
        let (v, unit) = split_number(text)?;
        let bytes = match unit {
            "B" => v,
            "KB" | "KiB" => v * 1024.0,
            "MB" | "MiB" => v * 1024.0 * 1024.0,
            "flit" | "flits" => v * self.flit_bytes as f64,
            "" => {
                return Err(UnitError(format!(
                    "`{text}` has no unit; write a size such as `4KB` or `64B`"
                )));
            }
            u => {
                return Err(UnitError(format!(
                    "`{text}`: `{u}` is not a size unit (B, KB, MB, flits)"
                )));
            }
        };
        let f = (bytes / self.flit_bytes as f64).ceil();
        if f > MAX_FLITS as f64 {
            return Err(UnitError(format!(
                "`{text}` is beyond the largest size, 2^32 - 1 flits of {} B",
                self.flit_bytes
            )));
        }
        Ok(f as u64)
    }

    /// Link latency of `metres` of cable at `ns_per_metre`, in cycles: nearest, at least 1
    /// (saturating at `u64::MAX` for lengths no link has: callers bound it).
    pub fn cable_cycles(&self, metres: f64, ns_per_metre: f64) -> u64 {
        ((metres * ns_per_metre / self.cycle_ns()).round() as u64).max(1)
    }

    /// A rate (`100Gb/s`, `56 Gb/s`) in Gb/s.
    pub fn parse_rate(text: &str) -> Result<f64, UnitError> {
        let (v, unit) = split_number(text)?;
        match unit {
            "Gb/s" | "Gbps" => Ok(v),
            "Mb/s" | "Mbps" => Ok(v / 1000.0),
            "Tb/s" => Ok(v * 1000.0),
            _ => Err(UnitError(format!("`{text}` is not a rate (Gb/s)"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn design_examples() {
        let tb = TimeBase::default();
        assert!((tb.cycle_ns() - 5.12).abs() < 1e-12);
        assert_eq!(tb.flits("4KB").unwrap(), 64, "a 4 KB MTU is 64 flits");
        assert_eq!(tb.flits("344KB").unwrap(), 5504);
        assert_eq!(tb.flits("84flits").unwrap(), 84);
        assert_eq!(tb.cycles("30ns").unwrap(), 6, "a 5 m link at 6 ns/m");
        assert_eq!(tb.cable_cycles(5.0, 6.0), 6);
        assert_eq!(tb.cable_cycles(0.1, 6.0), 1, "at least one cycle");
        assert_eq!(tb.cycles("5ms").unwrap(), 976_563);
        assert_eq!(tb.cycles("120ms").unwrap(), 23_437_500);
        assert_eq!(tb.cycles("3 ms").unwrap(), 585_938);
        assert_eq!(TimeBase::parse_rate("100Gb/s").unwrap(), 100.0);
    }

    #[test]
    fn wrong_units_are_named() {
        let tb = TimeBase::default();
        assert!(tb.cycles("30").unwrap_err().0.contains("no unit"));
        assert!(tb.cycles("30KB").unwrap_err().0.contains("not a time unit"));
        assert!(tb.flits("4ms").unwrap_err().0.contains("not a size unit"));
        assert!(tb.cycles("-3ms").is_err());
        assert!(tb.cycles("ms").unwrap_err().0.contains("number"));
        // Underscores only between digits, as in TOML.
        assert_eq!(tb.cycles("1_000ns").unwrap(), tb.cycles("1000ns").unwrap());
        for bad in ["5__0ns", "_50ns", "50_ns", "5_.0ns", "5._0ns"] {
            let e = tb.cycles(bad).unwrap_err().0;
            assert!(e.contains("an underscore in a number"), "{bad}: {e}");
        }
    }

    #[test]
    fn huge_values_are_errors_not_saturated() {
        let tb = TimeBase::default();
        assert!(tb.cycles("1e30s").unwrap_err().0.contains("2^40 cycles"));
        assert_eq!(tb.cycles("5629s").unwrap(), 1_099_414_062_500);
        assert!(tb.cycles("5630s").is_err(), "just above 2^40 cycles");
        assert!(tb.flits("1e30MB").unwrap_err().0.contains("2^32 - 1 flits"));
        assert!(tb.cycles("nanms").is_err() && tb.cycles("infs").is_err());
    }
}
