//! Category labels that never overlap: what every label shares is said once (in the axis
//! title), a family shared by neighbours (`mem-churn` of `mem-churn:50%` and
//! `mem-churn:100%`) is written once under its group, a long label is wrapped at its
//! separators, and when nothing fits the categories are lettered with a key under the chart.

use crate::render::canvas::text_width;

/// How the categories are labelled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fitted {
    /// Each category's label, one or more lines.
    pub lines: Vec<Vec<String>>,
    /// Families written once under their neighbours: (first, last category, family).
    pub groups: Vec<(usize, usize, String)>,
    /// Letters standing for labels: (letter, the whole label), drawn as a key.
    pub key: Vec<(String, String)>,
    /// The parts every label had (`cpus=1`), said once.
    pub common: Option<String>,
}

/// Gap kept between neighbouring labels.
const GAP: f64 = 8.0;

/// The parts (split at `,`) every label of several parts has, removed from each; the rest
/// of each label and the common parts joined (None when no part is common).
pub fn without_common(labels: &[String]) -> (Vec<String>, Option<String>) {
    let parts: Vec<Vec<&str>> = labels.iter().map(|l| l.split(',').collect()).collect();
    let multi: Vec<&Vec<&str>> = parts.iter().filter(|p| p.len() > 1).collect();
    if multi.len() < 2 {
        return (labels.to_vec(), None);
    }
    let common: Vec<&str> = multi[0]
        .iter()
        .copied()
        .filter(|part| multi.iter().all(|p| p.contains(part)))
        .filter(|part| !part.is_empty())
        .collect();
    if common.is_empty() {
        return (labels.to_vec(), None);
    }
    let rest = parts
        .iter()
        .map(|p| {
            let kept: Vec<&str> = p.iter().copied().filter(|x| !common.contains(x)).collect();
            if kept.is_empty() {
                p.join(",")
            } else {
                kept.join(",")
            }
        })
        .collect();
    (rest, Some(common.join(",")))
}

/// Fits `labels` under categories `slot` units apart at `font`, in at most `max_lines`.
pub fn fit(labels: &[String], slot: f64, font: f64, max_lines: usize) -> Fitted {
    let (labels, common) = without_common(labels);
    let fits = |t: &str, room: f64| text_width(t, font) + GAP <= room;
    if labels.iter().all(|l| fits(l, slot)) {
        let lines = labels.iter().map(|l| vec![l.clone()]).collect();
        return Fitted {
            lines,
            common,
            ..Fitted::default()
        };
    }
    if max_lines >= 2 {
        if let Some(f) = grouped(&labels, slot, &fits) {
            return Fitted { common, ..f };
        }
    }
    let wrapped: Vec<Vec<String>> = labels.iter().map(|l| wrap(l, slot - GAP, font)).collect();
    if wrapped
        .iter()
        .all(|w| w.len() <= max_lines && w.iter().all(|x| fits(x, slot)))
    {
        return Fitted {
            lines: wrapped,
            common,
            ..Fitted::default()
        };
    }
    keyed(&labels, common)
}

/// Fits `labels` beside rows (a phone's horizontal bars) `width` units wide: families joined
/// to their part by a space, wrapped in two lines at most, else lettered with a key.
pub fn fit_rows(labels: &[String], width: f64, font: f64) -> Fitted {
    let (labels, common) = without_common(labels);
    let spaced: Vec<String> = labels.iter().map(|l| l.replacen(':', " ", 1)).collect();
    let wrapped: Vec<Vec<String>> = spaced.iter().map(|l| wrap(l, width - GAP, font)).collect();
    let fits = |x: &String| text_width(x, font) + GAP <= width;
    if wrapped.iter().all(|w| w.len() <= 2 && w.iter().all(fits)) {
        return Fitted {
            lines: wrapped,
            common,
            ..Fitted::default()
        };
    }
    keyed(&labels, common)
}

/// The last resort of both fits: each label a letter, its text in a key under the chart.
fn keyed(labels: &[String], common: Option<String>) -> Fitted {
    let key: Vec<(String, String)> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (letter(i), l.clone()))
        .collect();
    Fitted {
        lines: key.iter().map(|k| vec![k.0.clone()]).collect(),
        key,
        common,
        ..Fitted::default()
    }
}

/// Labels of a family written once under neighbours sharing it (`cpu:50%`, `cpu:100%`: `50%`
/// and `100%` each, `cpu` under both), when every part then fits.
fn grouped(labels: &[String], slot: f64, fits: &dyn Fn(&str, f64) -> bool) -> Option<Fitted> {
    let split: Vec<(&str, &str)> = labels
        .iter()
        .map(|l| l.split_once(':').unwrap_or((l.as_str(), "")))
        .collect();
    let mut groups: Vec<(usize, usize, String)> = Vec::new();
    for (i, (family, rest)) in split.iter().enumerate() {
        if rest.is_empty() {
            continue;
        }
        match groups.last_mut() {
            Some(g) if g.1 + 1 == i && g.2 == *family => g.1 = i,
            _ => groups.push((i, i, family.to_string())),
        }
    }
    if !groups.iter().any(|g| g.1 > g.0) {
        return None;
    }
    let lines: Vec<Vec<String>> = split
        .iter()
        .map(|(family, rest)| vec![if rest.is_empty() { family } else { rest }.to_string()])
        .collect();
    let ok = lines.iter().all(|l| fits(&l[0], slot))
        && groups
            .iter()
            .all(|g| fits(&g.2, slot * (g.1 - g.0 + 1) as f64));
    ok.then_some(Fitted {
        lines,
        groups,
        ..Fitted::default()
    })
}

/// `text` broken after its separators (`:`, `,`, `+`, `=`, `-`, space) into lines no wider
/// than `width` at `font`.
pub fn wrap(text: &str, width: f64, font: f64) -> Vec<String> {
    let mut pieces: Vec<String> = vec![String::new()];
    for ch in text.chars() {
        pieces.last_mut().expect("a piece").push(ch);
        if [':', ',', '+', '=', '-', ' '].contains(&ch) {
            pieces.push(String::new());
        }
    }
    let mut lines: Vec<String> = Vec::new();
    for p in pieces.into_iter().filter(|p| !p.is_empty()) {
        match lines.last_mut() {
            Some(l) if text_width(&format!("{l}{p}"), font) <= width => l.push_str(&p),
            _ => lines.push(p),
        }
    }
    lines
        .into_iter()
        .map(|l| l.trim_end().to_string())
        .collect()
}

/// A, B, ..., Z, AA, AB, ...
fn letter(i: usize) -> String {
    let mut out = String::new();
    let mut n = i + 1;
    while n > 0 {
        out.insert(0, (b'A' + ((n - 1) % 26) as u8) as char);
        n = (n - 1) / 26;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loads() -> Vec<String> {
        let mut l = vec!["none".to_string()];
        for kind in ["cpu", "mem-churn", "prot-fault", "mem-access"] {
            for level in ["50%", "100%"] {
                l.push(format!("{kind}:{level},cpus=1"));
            }
        }
        l
    }

    #[test]
    fn the_memory_load_suites_loads_are_grouped_by_family() {
        // Nine loads in 820 units at 17: 91 units a load, "mem-churn:100%" needs 148.
        let f = fit(&loads(), 91.0, 17.0, 3);
        assert_eq!(f.common.as_deref(), Some("cpus=1"));
        assert_eq!(f.lines[0], ["none"]);
        assert_eq!(f.lines[3], ["50%"]);
        assert_eq!(f.groups[1], (3, 4, "mem-churn".to_string()));
        assert!(f.key.is_empty());
    }

    #[test]
    fn labels_that_fit_stay_whole_and_too_long_ones_get_a_key() {
        let short = ["a".to_string(), "bb".to_string()];
        assert_eq!(fit(&short, 100.0, 17.0, 2).lines, [["a"], ["bb"]]);
        let long: Vec<String> = (0..30)
            .map(|i| format!("scenario number {i} with a long name"))
            .collect();
        let f = fit(&long, 20.0, 17.0, 2);
        assert_eq!(f.key.len(), 30);
        assert_eq!(f.lines[27], ["AB"]);
        assert_eq!(f.key[0].1, "scenario number 0 with a long name");
    }

    #[test]
    fn wrapping_breaks_after_separators() {
        let w = wrap(
            "mem-churn:100%,cpus=1",
            text_width("mem-churn:100%", 10.0),
            10.0,
        );
        assert_eq!(w, ["mem-churn:", "100%,cpus=1"]);
        assert_eq!(without_common(&["none".into()]).1, None);
    }
}
