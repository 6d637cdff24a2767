//! Key names and places: the line of a byte offset, the generic name of a key inside an
//! array of tables (`topology.link[3].a` is `topology.link[].a`), and the edit distance used to
//! suggest the key a misspelt one meant.

/// Line numbers (1-based) of byte offsets, from the offsets where lines start: one pass over
/// the text, then a binary search per lookup.
pub(super) struct Lines(Vec<usize>);

impl Lines {
    pub(super) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines(starts)
    }

    pub(super) fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&s| s <= offset)
    }
}

/// The key with every `[index]` written `[]`: one name for all the tables of an array.
pub(super) fn generic(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut in_index = false;
    for c in key.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            c => out.push(c),
        }
    }
    out
}

/// `generic` undone: the indices of `key`, in order, put back into `pattern`.
pub(super) fn specific(pattern: &str, key: &str) -> String {
    let mut indices = key
        .split('[')
        .skip(1)
        .map(|s| s.split(']').next().unwrap_or(""));
    let mut out = String::new();
    for (i, part) in pattern.split("[]").enumerate() {
        if i > 0 {
            match indices.next() {
                Some(x) => out.push_str(&format!("[{x}]")),
                None => out.push_str("[]"),
            }
        }
        out.push_str(part);
    }
    out
}

/// Levenshtein distance of `a` and `b`, or `None` when above `max`.
pub(super) fn distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + (ca != cb) as usize)
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    Some(prev[b.len()]).filter(|&d| d <= max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_from_offsets() {
        let l = Lines::new("a\nbc\n\nd");
        assert_eq!([0, 1, 2, 4, 5, 6].map(|o| l.line(o)), [1, 1, 2, 2, 3, 4]);
    }

    #[test]
    fn keys_with_indices() {
        assert_eq!(generic("topology.link[12].a"), "topology.link[].a");
        assert_eq!(
            specific("topology.link[].b", "topology.link[12].bb"),
            "topology.link[12].b"
        );
        assert_eq!(distance("bufer", "buffer", 2), Some(1));
        assert_eq!(distance("routing", "queuing", 2), None);
    }
}
