//! tests only: the text boxes a chart's own layer wrote, sized as laid out, the check that
//! no two of them overlap, and the field fixtures charts are tried on, shared by the tests
//! of every chart in the kit (the browser tests in tests/it/pictures.rs measure in chromium).

use crate::render::canvas::text_width;
use crate::render::plot_marks::svg_attr;

/// A text element: (left, top, right, bottom, text).
pub type TextBox = (f64, f64, f64, f64, String);

/// The text elements the layer wrote (one per line, not rotated), sized as laid out.
pub fn text_boxes(svg: &str) -> Vec<TextBox> {
    let attr = |tag: &str, name: &str| -> f64 { svg_attr(tag, name).parse().unwrap() };
    svg.lines()
        .filter(|l| l.starts_with("<text") && !l.contains("rotate("))
        .map(|l| {
            let tag = &l[..l.find('>').unwrap()];
            let text = l[l.find('>').unwrap() + 1..l.rfind("</text>").unwrap()].to_string();
            let (x, y, size) = (attr(tag, "x"), attr(tag, "y"), attr(tag, "font-size"));
            let w = text_width(&text, size);
            let left = match svg_attr(tag, "text-anchor") {
                "middle" => x - w / 2.0,
                "end" => x - w,
                _ => x,
            };
            (left, y - size / 2.0, left + w, y + size / 2.0, text)
        })
        .collect()
}

/// Panics naming the first two texts of `svg` whose boxes overlap by more than a unit.
pub fn assert_no_overlap(svg: &str, what: &str) {
    let boxes = text_boxes(svg);
    assert!(!boxes.is_empty(), "{what}: no text");
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let w = a.2.min(b.2) - a.0.max(b.0);
            let h = a.3.min(b.3) - a.1.max(b.1);
            assert!(w <= 1.0 || h <= 1.0, "{what}: {:?} overlaps {:?}", a.4, b.4);
        }
    }
}

/// A recorded result file of tests/fixtures/field/ (tests/fixtures/field/record.sh).
pub fn field(name: &str) -> serde_json::Value {
    let path = format!("{}/tests/fixtures/field/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}
