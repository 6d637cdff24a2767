//! Test helpers: a GTKWave save file read without GTKWave (its rows, the view it opens on, what
//! the names column shows of each row and in which radix), and the names GTKWave gives the
//! signals of a VCD. A row whose name is not one of them is dropped by GTKWave without
//! a word, so every save file the model writes is checked against its dump.

use std::collections::BTreeSet;

/// One signal row of a save file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The flags of the `@` line before it (hexadecimal text, `24`).
    pub flags: String,
    /// The name it is shown by, when aliased (`+{alias} name`).
    pub alias: Option<String>,
    /// The signal's full name, `[msb:lsb]` included.
    pub name: String,
}

/// The signal rows of save file `text`, in order (group and blank rows left out).
pub fn rows(text: &str) -> Vec<Row> {
    let mut flags = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        match line.chars().next() {
            Some('@') => flags = line[1..].to_string(),
            None | Some('-' | '[' | '*' | '#' | '^') => {}
            Some('+') => {
                let (alias, name) = line[2..].split_once("} ").expect("`+{alias} name`");
                out.push(Row {
                    flags: flags.clone(),
                    alias: Some(alias.to_string()),
                    name: name.to_string(),
                });
            }
            Some(_) => out.push(Row {
                flags: flags.clone(),
                alias: None,
                name: line.to_string(),
            }),
        }
    }
    out
}

/// The width in pixels of the wave pane GTKWave 3.3.118 draws in the window a save file asks for
/// (`[size] 1400 860`, with its `[sst_width]` and `[signals_width]`), as it reports it
/// (`gtkwave::getWaveWidth`).
pub const DRAWN_WAVE_PIXELS: u32 = 760;

/// Where a save file places the view on opening.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// `[timestart]`: the time at the left edge of the waves.
    pub start: u64,
    /// The zoom of the `*` line: `2^-zoom` time units per 200 pixels.
    pub zoom: f64,
    /// The primary marker of the `*` line.
    pub marker: i64,
}

impl View {
    /// The times across `pixels` of waves from the left edge, as GTKWave draws them.
    pub fn shown(&self, pixels: u32) -> (u64, u64) {
        let span = 2f64.powf(-self.zoom) / 200.0 * f64::from(pixels);
        (self.start, self.start + span.round() as u64)
    }
}

/// The view save file `text` opens on (`[timestart]`, 0 without one, and the `*` line).
pub fn view(text: &str) -> View {
    let start = text
        .lines()
        .find_map(|l| l.strip_prefix("[timestart] "))
        .map_or(0, |t| t.trim().parse().expect("a time"));
    let star = text
        .lines()
        .find_map(|l| l.strip_prefix('*'))
        .expect("a `*zoom marker ...` line");
    let mut t = star.split_whitespace();
    let zoom = t.next().and_then(|z| z.parse().ok()).expect("a zoom");
    let marker = t.next().and_then(|m| m.parse().ok()).expect("a marker");
    View {
        start,
        zoom,
        marker,
    }
}

/// What GTKWave writes in the names column for `row`: its alias, or else its name, cut to what
/// follows the last `.` (`hier_max_level` 1, GTKWave's default); a name keeps its bit range
/// (`occupancy[15:0]`).
pub fn shown_name(row: &Row) -> String {
    let text = row.alias.as_deref().unwrap_or(&row.name);
    let (path, range) = text.split_at(text.find('[').unwrap_or(text.len()));
    let leaf = path.rsplit('.').next().unwrap_or(path);
    format!("{leaf}{range}")
}

/// The trace flag bits GTKWave reads from a row's `@` line.
pub fn flag_bits(row: &Row) -> u32 {
    u32::from_str_radix(&row.flags, 16).expect("hexadecimal flags")
}

/// How a row shows its values: `"hex"`, `"dec"`, `"bin"` (GTKWave's flags 0x2, 0x4, 0x8; the
/// first of them set), and whether through a translate filter file (0x2000).
pub fn radix(row: &Row) -> (&'static str, bool) {
    let f = flag_bits(row);
    let r = if f & 0x2 != 0 {
        "hex"
    } else if f & 0x4 != 0 {
        "dec"
    } else if f & 0x8 != 0 {
        "bin"
    } else {
        "none"
    };
    (r, f & 0x2000 != 0)
}

/// The translate filter files save file `text` names (`^1 <file>`), in order, each once.
pub fn filters(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in text.lines().filter_map(|l| l.strip_prefix("^1 ")) {
        if !out.iter().any(|o| o == f) {
            out.push(f.to_string());
        }
    }
    out
}

/// The names GTKWave gives the signals of a VCD: scopes and reference joined by `.`, then the
/// bit range of a vector (`fabric.s1_0.out0.vc0.credits[15:0]`, `TOP.tb_x.u_dut.occ_i[3][15:0]`).
pub fn vcd_names(vcd: &str) -> BTreeSet<String> {
    let mut scopes: Vec<&str> = Vec::new();
    let mut names = BTreeSet::new();
    for line in vcd.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        match t.first().copied() {
            Some("$scope") => scopes.push(t[2]),
            Some("$upscope") => {
                scopes.pop();
            }
            Some("$var") => {
                let width: u32 = t[2].parse().expect("a width");
                let range = if width > 1 && t[5] != "$end" {
                    t[5]
                } else {
                    ""
                };
                names.insert(format!("{}.{}{range}", scopes.join("."), t[4]));
            }
            Some("$enddefinitions") => break,
            _ => {}
        }
    }
    names
}

/// The rows of save file `gtkw` whose names are not signals of `vcd`.
pub fn missing(gtkw: &str, vcd: &str) -> Vec<String> {
    let names = vcd_names(vcd);
    rows(gtkw)
        .into_iter()
        .filter(|r| !names.contains(&r.name))
        .map(|r| r.name)
        .collect()
}

#[test]
fn rows_and_names_are_read_as_gtkwave_reads_them() {
    let gtkw = "[dumpfile] \"a.vcd\"\n*-3.0 0 -1\n@28\nTOP.clk\n@800200\n-grp\n@24\n+{a/b} TOP.a.b[7:0]\n@1000200\n-grp\n";
    let r = rows(gtkw);
    assert_eq!(r.len(), 2);
    assert_eq!(r[1].alias.as_deref(), Some("a/b"));
    assert_eq!(
        (r[1].flags.as_str(), r[1].name.as_str()),
        ("24", "TOP.a.b[7:0]")
    );
    let vcd = "$scope module TOP $end\n$var wire 1 ! clk $end\n$scope module a $end\n$var wire 8 \" b [7:0] $end\n$upscope $end\n$upscope $end\n$enddefinitions $end\n";
    assert!(missing(gtkw, vcd).is_empty());
    assert_eq!(missing("@22\nTOP.a.b\n", vcd), ["TOP.a.b"]);
    assert_eq!(
        filters("^1 s.txt\n@2024\nTOP.a.b[7:0]\n^1 s.txt\n"),
        ["s.txt"]
    );
}

#[test]
fn the_view_and_the_names_column_are_read_as_gtkwave_reads_them() {
    let gtkw = "[timestart] 40010240\n*-23.346698 40010240 -1 -1\n@24\n+{s1_0/in0/vc1/occupancy} fabric.s1_0.in0.vc1.occupancy[15:0]\n@24\n+{s1_0.in0.vc0.occupancy} fabric.s1_0.in0.vc0.occupancy[15:0]\n@22\nfabric.s1_0.in0.vc0.occupancy[15:0]\n@2024\nTOP.tb.u_dut.state_q[1:0]\n";
    let v = view(gtkw);
    assert_eq!((v.start, v.marker), (40_010_240, 40_010_240));
    // GTKWave 3.3.118 reports this file's view as 40010240..80546177.
    let (a, b) = v.shown(DRAWN_WAVE_PIXELS);
    assert_eq!(a, 40_010_240);
    assert!(b.abs_diff(80_546_177) < 1000, "{b}");
    let r = rows(gtkw);
    // GTKWave showed these rows as `s1_0/in0/vc1/occupancy`, `occupancy` (the alias cut at its
    // last dot), `occupancy[15:0]`.
    let names: Vec<String> = r.iter().map(shown_name).collect();
    assert_eq!(
        names,
        [
            "s1_0/in0/vc1/occupancy",
            "occupancy",
            "occupancy[15:0]",
            "state_q[1:0]"
        ]
    );
    assert_eq!(radix(&r[0]), ("dec", false));
    assert_eq!(radix(&r[2]), ("hex", false));
    assert_eq!(radix(&r[3]), ("dec", true));
    assert_eq!(view("@28\nclk\n*0.000000 -1\n").start, 0);
}
