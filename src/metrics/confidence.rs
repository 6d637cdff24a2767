//! The mean of a metric over a sweep point's replications (runs that differ only in their seed)
//! and the half-width of its 95 % confidence interval, from Student's t distribution with n - 1
//! degrees of freedom: mean ± t(0.975, n - 1) · s / √n, s the sample standard deviation.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// A metric over n runs: its mean and, for two runs or more, the half-width of the 95 %
/// confidence interval of the mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// Runs it is taken over.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Half-width of the 95 % confidence interval; `None` for a single run.
    pub ci95: Option<f64>,
}

/// The estimate of `xs`; `None` when there is no value.
pub fn estimate(xs: &[f64]) -> Option<Estimate> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let ci95 = (n > 1).then(|| {
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t975(n - 1) * (var / n as f64).sqrt()
    });
    Some(Estimate { n, mean, ci95 })
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (`df` ≥ 1).
pub fn t975(df: usize) -> f64 {
    StudentsT::new(0.0, 1.0, df as f64).map_or(f64::NAN, |t| t.inverse_cdf(0.975))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_the_tables() {
        // Student's t, two-sided 95 %, as printed in statistics tables.
        for (df, t) in [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042)] {
            assert!((t975(df) - t).abs() < 5e-4, "df {df}: {}", t975(df));
        }
        assert!(
            (t975(100_000) - 1.95996).abs() < 1e-4,
            "towards the normal's"
        );
    }

    #[test]
    fn a_mean_and_its_interval() {
        assert_eq!(estimate(&[]), None);
        let one = estimate(&[0.5]).unwrap();
        assert_eq!((one.n, one.mean, one.ci95), (1, 0.5, None));
        // 1, 2, 3: mean 2, s = 1, half-width t(0.975, 2) / √3 = 4.3027 / 1.7321.
        let e = estimate(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(e.mean, 2.0);
        assert!((e.ci95.unwrap() - 2.484).abs() < 1e-3, "{e:?}");
        // Equal values: no spread.
        assert_eq!(estimate(&[4.0, 4.0]).unwrap().ci95, Some(0.0));
    }
}
