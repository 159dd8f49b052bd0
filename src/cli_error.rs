//! clap's own refusals (a value outside a fixed set, a value its parser refused, an
//! unknown option) in latscope's one-line style, `latscope: error: invalid --policy
//! 'fif': possible values other, fifo, rr (did you mean 'fifo'?)`, so every bad input
//! reads alike (issue 25, item 9). Help, version and the rest pass through as clap has them.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// The one-line message for `err`, or None to let clap print it.
pub fn one_line(err: &clap::Error) -> Option<String> {
    let text = |kind| match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let list = |kind| match err.get(kind) {
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    // `--policy <POLICY>` -> `--policy`.
    let option = text(ContextKind::InvalidArg)
        .map(|a| a.split_whitespace().next().unwrap_or_default().to_string());
    let suggestion = |kind| match list(kind).first() {
        Some(s) => format!(" (did you mean '{s}'?)"),
        None => String::new(),
    };
    match err.kind() {
        ErrorKind::InvalidValue => {
            let value = text(ContextKind::InvalidValue)?;
            let valid = list(ContextKind::ValidValue);
            if valid.is_empty() {
                return Some(format!("{} needs a value", option?));
            }
            Some(format!(
                "invalid {} '{}': possible values {}{}",
                option?,
                crate::error::clip(&value),
                valid.join(", "),
                suggestion(ContextKind::SuggestedValue)
            ))
        }
        ErrorKind::ValueValidation => {
            let value = text(ContextKind::InvalidValue)?;
            let reason = std::error::Error::source(err)?.to_string();
            Some(format!(
                "invalid {} '{}': {reason}",
                option?,
                crate::error::clip(&value)
            ))
        }
        ErrorKind::UnknownArgument => {
            let arg = option?;
            let hint = match list(ContextKind::SuggestedArg).first() {
                Some(s) => format!(" (did you mean '{s}'?)"),
                None => String::new(),
            };
            Some(format!(
                "unexpected argument '{}'{hint}; --help lists the options",
                crate::error::clip(&arg)
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;
    use clap::Parser;

    fn refusal(args: &[&str]) -> String {
        let err = crate::cli::Cli::try_parse_from(args).unwrap_err();
        one_line(&err).unwrap_or_else(|| panic!("left to clap: {err}"))
    }

    #[test]
    fn values_options_and_parsers_refuse_in_one_line_with_a_suggestion() {
        assert_eq!(
            refusal(&["latscope", "timer", "--policy", "fif"]),
            "invalid --policy 'fif': possible values other, fifo, rr (did you mean 'fifo'?)"
        );
        let unknown = refusal(&["latscope", "timer", "--perod", "1ms"]);
        assert!(
            unknown.starts_with("unexpected argument '--perod' (did you mean '--period'?)"),
            "{unknown}"
        );
        let samples = refusal(&["latscope", "timer", "--samples", "x"]);
        assert!(
            samples.starts_with("invalid --samples 'x': not a number of samples"),
            "{samples}"
        );
        assert!(!refusal(&["latscope", "report", "a.json", "-f", "xml"]).contains('\n'));
    }
}
