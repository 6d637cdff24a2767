//! The SL-to-VL mapping tables of a switch (InfiniBand's SLtoVLMappingTable, one per output
//! port; seed 003, Maglione-Mathey et al., section 2 and figure 1): for each output port, input
//! port and service level (4 bits), the VL (4 bits) a packet takes on the link out. The subnet
//! manager writes them with the LFT; a switch out of reset maps every SL to the VL of the same
//! number. In `hdl-ref/input_port_ctrl.sv` each input port holds its own column (every output,
//! every SL), written through the switch's `sl2vl_wr_*` port.

/// Service levels (and VLs) of InfiniBand: 4 bits.
pub const SLS: usize = 16;

/// The tables of every output port. Empty storage is the reset state, VL = SL everywhere (state
/// kept for speed: no lookup, no memory for the common case).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct SlToVl {
    ports: usize,
    /// `vl[(out · ports + input) · 16 + sl]`, or empty.
    vl: Vec<u8>,
}

impl SlToVl {
    /// The reset state: VL = SL on every port.
    pub fn identity() -> Self {
        Self::default()
    }

    /// Whether every entry maps an SL to the VL of the same number.
    pub fn is_identity(&self) -> bool {
        self.entries().next().is_none()
    }

    /// The VL of a packet of service level `sl` from input `input` to output `out`.
    #[inline]
    pub fn vl(&self, out: usize, input: usize, sl: u8) -> u8 {
        if self.vl.is_empty() {
            sl
        } else {
            self.vl[(out * self.ports + input) * SLS + (sl as usize & (SLS - 1))]
        }
    }

    /// Writes one entry of a switch of `ports` ports (the first write sizes the tables).
    pub fn set(&mut self, ports: usize, out: usize, input: usize, sl: u8, vl: u8) {
        if self.vl.is_empty() {
            self.ports = ports;
            self.vl = (0..ports * ports * SLS).map(|i| (i % SLS) as u8).collect();
        }
        assert_eq!(ports, self.ports, "SL-to-VL tables of another radix");
        self.vl[(out * ports + input) * SLS + sl as usize] = vl & (SLS as u8 - 1);
    }

    /// The entries that differ from the reset state, `(out, input, sl, vl)` in that order.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize, u8, u8)> + '_ {
        self.vl.iter().enumerate().filter_map(move |(i, &vl)| {
            let sl = (i % SLS) as u8;
            let pair = i / SLS;
            (vl != sl).then(|| (pair / self.ports, pair % self.ports, sl, vl))
        })
    }

    /// The largest VL an entry names (`None` at reset).
    pub fn max_vl(&self) -> Option<u8> {
        self.entries().map(|e| e.3).max()
    }
}

impl PartialEq for SlToVl {
    /// Equal when every entry maps alike (sized and reset storage alike).
    fn eq(&self, other: &Self) -> bool {
        self.entries().eq(other.entries())
    }
}

impl Eq for SlToVl {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_kept_per_output_input_and_sl() {
        let mut t = SlToVl::identity();
        assert!(t.is_identity());
        assert_eq!(t.vl(3, 1, 5), 5);
        t.set(4, 3, 1, 5, 2);
        t.set(4, 0, 2, 0, 1);
        assert_eq!(t.vl(3, 1, 5), 2);
        assert_eq!(t.vl(3, 2, 5), 5, "another input keeps its own entry");
        assert_eq!(t.vl(1, 1, 5), 5, "another output keeps its own entry");
        assert_eq!(
            t.entries().collect::<Vec<_>>(),
            [(0, 2, 0, 1), (3, 1, 5, 2)]
        );
        assert_eq!(t.max_vl(), Some(2));
        // Writing the reset value back leaves no entry.
        t.set(4, 3, 1, 5, 5);
        t.set(4, 0, 2, 0, 0);
        assert!(t.is_identity());
    }
}
