use super::super::sweep_csv::read_sweep_csv;
use super::*;

fn point(x: f64, accepted: f64, latency: Option<f64>, complete: bool) -> SweepPoint {
    SweepPoint {
        x,
        accepted,
        accepted_ci: None,
        mean_latency_ns: latency,
        latency_ci: None,
        complete,
    }
}

fn one(pts: &[SweepPoint]) -> [SweepSeries; 1] {
    [SweepSeries {
        label: "x".into(),
        points: pts.to_vec(),
    }]
}

#[test]
fn two_panels_and_stopped_runs_marked() {
    let pts = [
        point(0.2, 0.19, Some(800.0), true),
        point(0.5, 0.48, Some(1500.0), true),
    ];
    let svg = sweep_plot_svg("a <sweep>", &SweepAxis::load(), &one(&pts));
    assert_eq!(svg.matches("<polyline").count(), 2);
    assert_eq!(
        svg.matches("<circle").count(),
        4,
        "a point per run per panel"
    );
    assert!(svg.contains("a &lt;sweep&gt;") && svg.contains(">mean latency (ns)</text>"));
    assert!(svg.contains(">offered load</text>") && svg.contains("stroke-dasharray"));
    assert!(!svg.contains("stopped early") && !svg.contains("class=\"ci\""));
    // Latency ticks at a round step up to a round end above the largest latency.
    assert!(
        svg.contains(">1500</text>") && svg.contains(">500</text>"),
        "{svg}"
    );
    let pts = [
        point(0.2, 0.19, Some(800.0), true),
        point(0.9, 0.3, None, false),
    ];
    let svg = sweep_plot_svg("s", &SweepAxis::load(), &one(&pts));
    assert!(svg.contains("stopped early"));
    assert_eq!(
        svg.matches("<path").count(),
        1,
        "no latency point without packets"
    );
    assert_eq!(svg.matches("<circle").count(), 2);
}

#[test]
fn several_curves_share_the_panels_with_a_legend() {
    let a = SweepSeries {
        label: "MIN-1VL".into(),
        points: vec![
            point(0.5, 0.5, Some(700.0), true),
            point(0.9, 0.4, Some(9000.0), false),
        ],
    };
    let b = SweepSeries {
        label: "D3R-2VL".into(),
        points: vec![point(0.5, 0.5, Some(650.0), true)],
    };
    let axis = SweepAxis::load();
    let svg = sweep_plot_svg("t", &axis, &[a.clone(), b]);
    assert_eq!(svg.matches("<polyline").count(), 4, "two curves per panel");
    assert!(svg.contains(">MIN-1VL</text>") && svg.contains(">D3R-2VL</text>"));
    assert!(svg.contains("stopped early"));
    assert!(
        !sweep_plot_svg("t", &axis, &[a]).contains(">MIN-1VL</text>"),
        "no legend for one"
    );
}

#[test]
fn intervals_are_drawn_as_bars() {
    let mut p = point(64.0, 0.5, Some(700.0), true);
    p.accepted_ci = Some(0.05);
    p.latency_ci = Some(40.0);
    let q = point(128.0, 0.6, Some(600.0), true);
    let axis = SweepAxis::numbers("switch.buffer", &[64.0, 128.0]);
    let svg = sweep_plot_svg("t", &axis, &one(&[p, q]));
    assert_eq!(svg.matches("class=\"ci\"").count(), 2, "one bar per panel");
    assert!(svg.contains(">switch.buffer</text>"), "the key across");
    assert!(
        !svg.contains("stroke-dasharray"),
        "no accepted = offered line"
    );
    // The latency axis reaches above the top of the interval.
    assert!(svg.contains(">800</text>"), "{svg}");
}

#[test]
fn axes_of_numbers_and_of_names() {
    let a = SweepAxis::numbers("k", &[3.0, 17.0]);
    assert_eq!((a.lo, a.hi), (0.0, 20.0));
    assert_eq!(a.ticks.first().map(|t| t.1.as_str()), Some("0"));
    assert_eq!(a.ticks.last().map(|t| t.1.as_str()), Some("20"));
    let one = SweepAxis::numbers("k", &[8.0]);
    assert!(one.lo < 8.0 && one.hi > 8.0, "{one:?}");
    let c = SweepAxis::categories("routing", &["arn".into(), "dmodk".into()]);
    assert_eq!((c.lo, c.hi), (-0.5, 1.5));
    assert_eq!(c.ticks[1], (1.0, "dmodk".to_string()));
}

const HEADER: &str = "offered_load,routing,runs,accepted_load,accepted_load_ci95,mean_latency_ns,mean_latency_ns_ci95,status,reason";

#[test]
fn a_two_key_table_gives_a_curve_per_value_of_the_second() {
    let text = format!(
        "{HEADER}\n0.20,arn,2,0.19,0.01,800,20,complete,\n0.50,arn,2,0.48,0.02,900,30,complete,\n\
         0.20,dmodk,2,0.19,0.01,850,25,complete,\n0.50,dmodk,0,,,,,stopped,not finished\n"
    );
    let t = read_sweep_csv("s.csv", &text).unwrap();
    let (axis, series) = sweep_curves(&[("s".into(), t.clone())]).unwrap();
    assert!(axis.diagonal);
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["routing=arn", "routing=dmodk"]);
    assert_eq!(series[0].points.len(), 2);
    assert_eq!(
        series[1].points.len(),
        1,
        "the point not finished is left out"
    );
    assert_eq!(series[0].points[1].accepted_ci, Some(0.02));
    // Two sweeps: each curve is named by its sweep too.
    let (_, two) = sweep_curves(&[("a".into(), t.clone()), ("b".into(), t)]).unwrap();
    assert_eq!(two.len(), 4);
    assert_eq!(two[3].label, "b: routing=dmodk");
    // Swept against names: one slot per name.
    let by_name = "routing,runs,accepted_load,mean_latency_ns,status,reason\narn,1,0.5,700,complete,\nsslid,1,0.4,800,complete,\n";
    let t = read_sweep_csv("r.csv", by_name).unwrap();
    let (axis, series) = sweep_curves(&[("r".into(), t.clone())]).unwrap();
    assert_eq!(axis.ticks.len(), 2);
    assert_eq!(series[0].points[1].x, 1.0);
    let loads = read_sweep_csv(
        "s.csv",
        &format!("{HEADER}\n0.5,arn,1,0.5,,700,,complete,\n"),
    )
    .unwrap();
    let e = sweep_curves(&[("r".into(), t), ("s".into(), loads)]).unwrap_err();
    assert!(e.contains("share the key across"), "{e}");
}
