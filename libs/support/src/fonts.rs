//! The embedded DejaVu Sans (from the `dejavu` crate) registered as plotters' "sans-serif":
//! plotters lays out text with a registered font even for SVG, and no system fonts or
//! fontconfig are needed.

use plotters::style::FontStyle;

/// Registers the font, once per process (later calls do nothing). Call before drawing text.
pub fn register_sans_serif() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font shipped by the `dejavu` crate; registration only
        // fails for unparsable data, in which case text would be missing, not wrong.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
    });
}
