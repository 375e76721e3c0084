//! A colour per state, the legend, and the page's style sheet. Colours are
//! CSS classes (`s-failed`), so the SVG and the table use the same ones.

use crate::run::ExecState;

/// Every state, in legend order, with its colour.
pub const STATES: &[(ExecState, &str)] = &[
    (ExecState::Succeeded, "#2e9d4a"),
    (ExecState::Failed, "#d1342f"),
    (ExecState::TimedOut, "#e8711a"),
    (ExecState::Cancelled, "#8c8c8c"),
    (ExecState::Unknown, "#8e44ad"),
    (ExecState::Running, "#2f7ed8"),
    (ExecState::Claimed, "#9cc3f0"),
    (ExecState::Staged, "#c6dcf5"),
    (ExecState::Skipped, "#b9b9b9"),
    (ExecState::Missed, "#c9a20a"),
    (ExecState::Refused, "#7b1f1f"),
];

/// The lateness marks' colour.
pub const LATE: &str = "#f0a500";

/// The CSS class of a state.
pub fn class(state: ExecState) -> String {
    format!("s-{}", state.as_str())
}

/// The legend: one swatch per state, and the lateness mark.
pub fn legend() -> String {
    let mut out = String::from("<ul class=\"legend\">");
    for (state, _) in STATES {
        out.push_str(&format!(
            "<li><span class=\"swatch {}\"></span>{}</li>",
            class(*state),
            state.as_str().replace('_', " ")
        ));
    }
    out.push_str(
        "<li><span class=\"swatch late\"></span>started late (slot to start; ▼ when 1 s or more)</li></ul>",
    );
    out
}

/// The style sheet.
pub fn style() -> String {
    let mut css = String::from(
        "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}\
         h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.4em 0 .5em}\
         .dot{display:inline-block;width:.8em;height:.8em;border-radius:50%;margin-right:.4em}\
         .healthy{background:#2e9d4a}.unhealthy{background:#d1342f}\
         dl.facts{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;margin:0}\
         dl.facts dt{color:#666}dl.facts dd{margin:0}\
         table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25em .6em;\
         border-bottom:1px solid #e4e4e4;vertical-align:top}th{color:#666;font-weight:600}\
         .badge{display:inline-block;padding:0 .4em;border-radius:3px;color:#fff}\
         .muted{color:#777}.note{color:#777;font-style:italic}\
         ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3em 1.2em}\
         .swatch{display:inline-block;width:.9em;height:.9em;margin-right:.35em;vertical-align:-.1em}\
         svg.timeline{width:100%;height:auto;font:11px system-ui,sans-serif}\
         svg .lane-bg{fill:#f6f6f6}svg .grid{stroke:#ddd;stroke-width:1}\
         svg .now{stroke:#222;stroke-width:1}svg text{fill:#333}\
         .scroll{overflow-x:auto}h3{font-size:1em;margin:1em 0 .3em}\
         ol.runs{margin:0;padding-left:1.4em}ol.runs li{margin:.15em 0}\
         li.failure{background:#fdecea}.failures{color:#b3261e;font-weight:600}\
         .zoom{margin:.2em 0}.zoom a,.zoom strong{margin-left:.4em}\
         @media (max-width:600px){body{margin:.6em;font-size:13px}\
         dl.facts{grid-template-columns:auto}dl.facts dd{margin-bottom:.3em;overflow-wrap:anywhere}\
         th,td{padding:.2em .35em}}\n",
    );
    for (state, colour) in STATES {
        let c = class(*state);
        css.push_str(&format!(
            ".{c}{{fill:{colour};background:{colour}}}.badge.{c}{{background:{colour}}}\n"
        ));
    }
    css.push_str(&format!(
        ".late{{fill:{LATE};background:{LATE}}}svg .late-mark{{fill:{LATE}}}\n"
    ));
    css
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_has_one_colour_and_a_legend_entry() {
        let all = ExecState::ALL;
        assert_eq!(STATES.len(), all.len());
        let legend = legend();
        let css = style();
        for &state in all {
            assert_eq!(STATES.iter().filter(|(s, _)| *s == state).count(), 1);
            assert!(legend.contains(&class(state)), "{state:?}");
            assert!(css.contains(&format!(".{}{{", class(state))), "{state:?}");
        }
    }
}
