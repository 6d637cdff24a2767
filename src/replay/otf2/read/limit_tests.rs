//! The OTF2 reader refuses an archive past its operations.

use super::*;

#[test]
fn an_archive_past_its_operations_is_refused() {
    let mut c = Collector::new("app.otf2");
    c.ops = MAX_OPS - 1;
    assert_eq!(c.count_op(), Ok(()));
    assert_eq!(
        c.count_op(),
        Err("more than 67108864 operations; at most 2^26 are read".to_string())
    );
}
