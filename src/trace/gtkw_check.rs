//! Test helpers: the rows of a GTKWave save file read without GTKWave, and the names GTKWave
//! gives the signals of a VCD. A row whose name is not one of them is dropped by GTKWave without
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
