//! The ARN control flit: table-2 fields packed into one flit's payload.
//!
//! Bit layout of the 72-bit payload (LSB first), widths of table 2 of Rocher-Gonzalez et al.:
//!
//! | bits  | field | width |
//! |-------|-------|-------|
//! | 0-15  | destination | 16 |
//! | 16-23 | port (filled by the receiver: the port the ARN arrived on) | 8 |
//! | 24-31 | VC (original VC of the congesting packet) | 8 |
//! | 32-63 | ARNid | 32 |
//! | 64-71 | congestionRootInfo (stage where the ARN may be consumed) | 8 |
//!
//! The Consumed bit of table 2 is table state, not carried: the receiver decides it.

/// Field offsets and widths.
mod field {
    pub const DEST: (u32, u32) = (0, 16);
    pub const PORT: (u32, u32) = (16, 8);
    pub const VC: (u32, u32) = (24, 8);
    pub const ARN_ID: (u32, u32) = (32, 32);
    pub const ROOT_INFO: (u32, u32) = (64, 8);
    /// Payload width in bits.
    pub const WIDTH: u32 = 72;
}

/// Payload width of an ARN flit in bits.
pub const ARN_PAYLOAD_BITS: u32 = field::WIDTH;

/// A raw ARN payload, as the link carries it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ArnFlit(u128);

/// Error of [`ArnFlit::new_checked`]: bits set above the 72-bit payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArnWidthError;

impl ArnFlit {
    /// Wraps raw bits, refusing bits above the payload width.
    pub fn new_checked(bits: u128) -> Result<Self, ArnWidthError> {
        if bits >> field::WIDTH != 0 {
            return Err(ArnWidthError);
        }
        Ok(ArnFlit(bits))
    }

    /// The raw bits.
    pub fn bits(&self) -> u128 {
        self.0
    }

    fn get(&self, (lo, w): (u32, u32)) -> u128 {
        (self.0 >> lo) & ((1u128 << w) - 1)
    }

    fn set(&mut self, (lo, w): (u32, u32), v: u128) {
        let m = ((1u128 << w) - 1) << lo;
        self.0 = (self.0 & !m) | ((v << lo) & m);
    }
}

/// The fields of an ARN (the `ARNInfo` of the pseudo-codes of Rocher-Gonzalez et al.).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct ArnInfo {
    /// Destination LID whose packets cause the congestion.
    pub dest: u16,
    /// Port of the switch where congestion was detected or where the ARN was received.
    pub port: u8,
    /// Original VC of the congesting packet.
    pub vc: u8,
    /// Identifies the congestion root uniquely.
    pub arn_id: u32,
    /// Stage at which the ARN may be consumed (fat trees).
    pub root_info: u8,
}

impl ArnInfo {
    /// Reads the fields out of a flit.
    pub fn parse(f: &ArnFlit) -> Self {
        ArnInfo {
            dest: f.get(field::DEST) as u16,
            port: f.get(field::PORT) as u8,
            vc: f.get(field::VC) as u8,
            arn_id: f.get(field::ARN_ID) as u32,
            root_info: f.get(field::ROOT_INFO) as u8,
        }
    }

    /// Writes the fields into a flit.
    pub fn emit(&self, f: &mut ArnFlit) {
        f.set(field::DEST, self.dest as u128);
        f.set(field::PORT, self.port as u128);
        f.set(field::VC, self.vc as u128);
        f.set(field::ARN_ID, self.arn_id as u128);
        f.set(field::ROOT_INFO, self.root_info as u128);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn layout_is_as_documented() {
        let mut f = ArnFlit::default();
        ArnInfo {
            dest: 0x1234,
            port: 0x56,
            vc: 0x78,
            arn_id: 0x9abc_def0,
            root_info: 0x11,
        }
        .emit(&mut f);
        assert_eq!(f.bits(), 0x0011_9abc_def0_7856_1234);
    }

    #[test]
    fn too_wide_is_refused() {
        assert_eq!(ArnFlit::new_checked(1 << 72), Err(ArnWidthError));
        assert!(ArnFlit::new_checked((1 << 72) - 1).is_ok());
    }

    proptest! {
        #[test]
        fn parse_inverts_emit(dest: u16, port: u8, vc: u8, arn_id: u32, root_info: u8) {
            let a = ArnInfo { dest, port, vc, arn_id, root_info };
            let mut f = ArnFlit::default();
            a.emit(&mut f);
            prop_assert_eq!(ArnInfo::parse(&ArnFlit::new_checked(f.bits()).unwrap()), a);
        }
    }
}
