//! The QCN congestion notification message (IEEE 802.1Qau): what a congestion point sends to the
//! source of the frame it sampled, one control flit on the reverse directions of the links, out
//! of band of the data VCs and beside the ARN control flit. The standard's CNM names the
//! congestion point and the sampled frame's addresses and carries the quantised feedback; the
//! model's carries what its readers use: the sampled packet's source node (where the message
//! goes), its destination LID (which flow is to slow down) and the 6-bit |Fb|.

/// A congestion notification message.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Cnm {
    /// The sampled packet's source end node: the reaction point the message goes to.
    pub src: u16,
    /// The sampled packet's destination LID: the flow the reaction point slows.
    pub dest: u16,
    /// |Fb| quantised to 6 bits (1 to 63): how hard the flow is to slow down.
    pub fb: u8,
}

impl Cnm {
    /// The message in 40 bits (source, destination, feedback from the least significant).
    pub fn bits(&self) -> u64 {
        self.src as u64 | (self.dest as u64) << 16 | (self.fb as u64) << 32
    }

    /// The message of [`Cnm::bits`].
    pub fn of_bits(b: u64) -> Self {
        Cnm {
            src: b as u16,
            dest: (b >> 16) as u16,
            fb: (b >> 32) as u8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cnm_packs_into_forty_bits_and_back() {
        let c = Cnm {
            src: 0xBEEF,
            dest: 0x1234,
            fb: 63,
        };
        assert_eq!(c.bits() >> 40, 0);
        assert_eq!(Cnm::of_bits(c.bits()), c);
    }
}
