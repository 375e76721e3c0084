//! Samples and their summaries: nearest-rank percentiles, never a mean of a
//! skewed distribution, and the formatting the table uses.

/// A set of measurements in one unit.
#[derive(Clone, Debug, Default)]
pub(crate) struct Samples {
    values: Vec<f64>,
}

impl Samples {
    pub(crate) fn new() -> Samples {
        Samples::default()
    }

    pub(crate) fn from_vec(values: Vec<f64>) -> Samples {
        Samples { values }
    }

    pub(crate) fn push(&mut self, v: f64) {
        self.values.push(v);
    }

    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v = self.values.clone();
        v.sort_by(f64::total_cmp);
        v
    }

    /// The nearest-rank `q` quantile (0 < q <= 1); NaN when empty.
    pub(crate) fn quantile(&self, q: f64) -> f64 {
        let v = self.sorted();
        if v.is_empty() {
            return f64::NAN;
        }
        let rank = (q * v.len() as f64).ceil() as usize;
        v[rank.clamp(1, v.len()) - 1]
    }

    pub(crate) fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    pub(crate) fn p99(&self) -> f64 {
        self.quantile(0.99)
    }

    pub(crate) fn max(&self) -> f64 {
        self.quantile(1.0)
    }

    pub(crate) fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(f64::NAN)
    }
}

/// A figure with a sensible number of digits.
pub(crate) fn num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Milliseconds, as `1.23 ms`.
pub(crate) fn ms(v: f64) -> String {
    format!("{} ms", num(v))
}

/// `p50 X · p99 Y (n=N)` in milliseconds.
pub(crate) fn p50_p99_ms(s: &Samples) -> String {
    format!(
        "p50 {} · p99 {} (n={})",
        ms(s.median()),
        ms(s.p99()),
        s.len()
    )
}

/// `a / b` as `0.25x`.
pub(crate) fn ratio(a: f64, b: f64) -> String {
    if b == 0.0 || !a.is_finite() || !b.is_finite() {
        return "n/a".into();
    }
    format!("{}x", num(a / b))
}

/// Bytes as MiB.
pub(crate) fn mib(bytes: f64) -> String {
    format!("{} MiB", num(bytes / (1024.0 * 1024.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let s = Samples::from_vec((1..=100).map(f64::from).collect());
        assert_eq!(s.median(), 50.0);
        assert_eq!(s.p99(), 99.0);
        assert_eq!(s.max(), 100.0);
        assert_eq!(s.min(), 1.0);
        let one = Samples::from_vec(vec![7.0]);
        assert_eq!(one.p99(), 7.0);
        assert!(Samples::new().median().is_nan());
    }

    #[test]
    fn formatting() {
        assert_eq!(ms(1.234), "1.23 ms");
        assert_eq!(ms(12.34), "12.3 ms");
        assert_eq!(ms(123.4), "123 ms");
        assert_eq!(ratio(1.0, 4.0), "0.25x");
        assert_eq!(ratio(1.0, 0.0), "n/a");
        assert_eq!(mib(3.0 * 1024.0 * 1024.0), "3.00 MiB");
    }
}
