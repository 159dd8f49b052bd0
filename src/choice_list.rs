//! Comma lists of named choices as users type them (`--method busy,timerfd`,
//! `--mechanism all`): `all` stands for every choice, and a choice named twice runs once,
//! where it was first named.

/// A closed set of named values that a comma list picks from.
pub trait Choice: Copy + PartialEq + 'static {
    /// What one is called in messages and its option's name: `method`, `mechanism`.
    const KIND: &'static str;
    /// Every choice, in the order `all` gives them; the first is the example in messages.
    const CHOICES: &'static [Self];
    /// The name users type.
    fn choice_name(self) -> &'static str;
}

/// Parses `a,b,all`: each named choice in the order first named, `all` adding every one
/// not named yet; repeats are dropped. Errors name the unknown part and the choices.
pub fn parse_list<T: Choice>(text: &str) -> Result<Vec<T>, String> {
    let mut out: Vec<T> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let picked: &[T] = if part == "all" {
            T::CHOICES
        } else {
            let one = T::CHOICES
                .iter()
                .find(|c| c.choice_name() == part)
                .ok_or_else(|| {
                    let names: Vec<&str> = T::CHOICES.iter().map(|c| c.choice_name()).collect();
                    format!(
                        "unknown {} '{}'{}; choose from {} or all",
                        T::KIND,
                        crate::error::clip(part),
                        did_you_mean(part, names.iter().copied()),
                        names.join(", ")
                    )
                })?;
            std::slice::from_ref(one)
        };
        for &choice in picked {
            if !out.contains(&choice) {
                out.push(choice);
            }
        }
    }
    if out.is_empty() {
        return Err(format!(
            "no {kind} given; e.g. --{kind} {}",
            T::CHOICES[0].choice_name(),
            kind = T::KIND
        ));
    }
    Ok(out)
}

/// A clap value parser that offers names to shell completion (`--method <TAB>`) but takes
/// any text: a comma list (`busy,timerfd`) or `all` is checked where it is used
/// (`parse_list`), whose error names the bad part. Help keeps its own wording
/// (`hide_possible_values` on the option).
#[derive(Clone, Debug)]
pub struct Offered(Vec<&'static str>);

impl Offered {
    /// Every choice of `T`, then `all`.
    pub fn list<T: Choice>() -> Self {
        let names = T::CHOICES.iter().map(|c| c.choice_name());
        Self(names.chain(["all"]).collect())
    }

    /// These names (one value, not a list).
    pub fn names(names: &[&'static str]) -> Self {
        Self(names.to_vec())
    }
}

impl clap::builder::TypedValueParser for Offered {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|n| clap::builder::PossibleValue::new(*n)),
        ))
    }
}

/// ` (did you mean 'busy'?)` when `typed` is close to one of `names` (as clap suggests
/// for its own values), else nothing.
pub fn did_you_mean<'a>(typed: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let best = names
        .into_iter()
        .map(|n| (strsim::jaro(typed, n), n))
        .filter(|(score, _)| *score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, name)) => format!(" (did you mean '{name}'?)"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Fruit {
        Apple,
        Pear,
        Plum,
    }

    impl Choice for Fruit {
        const KIND: &'static str = "fruit";
        const CHOICES: &'static [Self] = &[Fruit::Apple, Fruit::Pear, Fruit::Plum];
        fn choice_name(self) -> &'static str {
            match self {
                Fruit::Apple => "apple",
                Fruit::Pear => "pear",
                Fruit::Plum => "plum",
            }
        }
    }

    #[test]
    fn a_near_miss_is_suggested_and_a_far_one_is_not() {
        let err = parse_list::<Fruit>("pera").unwrap_err();
        assert!(err.contains("'pera' (did you mean 'pear'?)"), "{err}");
        let err = parse_list::<Fruit>("zzz").unwrap_err();
        assert!(!err.contains("did you mean"), "{err}");
    }

    #[test]
    fn all_and_repeats_give_each_choice_once_in_first_order() {
        use Fruit::*;
        assert_eq!(parse_list("all"), Ok(vec![Apple, Pear, Plum]));
        assert_eq!(parse_list("plum,all"), Ok(vec![Plum, Apple, Pear]));
        assert_eq!(parse_list("all,plum"), Ok(vec![Apple, Pear, Plum]));
        assert_eq!(parse_list("pear, apple,pear,,"), Ok(vec![Pear, Apple]));
    }

    #[test]
    fn method_busy_all_runs_each_method_once() {
        use crate::probe::timer::Method;
        let methods = Method::parse_list("busy,all").unwrap();
        assert_eq!(methods.len(), Method::ALL.len());
        assert_eq!(methods[0], Method::Busy);
        for m in Method::ALL {
            assert_eq!(methods.iter().filter(|&&x| x == m).count(), 1, "{m:?}");
        }
        let err = Method::parse_list("sleepy").unwrap_err();
        assert!(err.starts_with("unknown method 'sleepy'; choose from clock-nanosleep, "));
        use crate::probe::wake::mechanism::Mechanism;
        assert_eq!(
            Mechanism::parse_list("futex,all,pipe").unwrap()[..2],
            [Mechanism::Futex, Mechanism::Eventfd]
        );
    }

    #[test]
    fn mistakes_are_named() {
        assert_eq!(
            parse_list::<Fruit>("apple,kiwi"),
            Err("unknown fruit 'kiwi'; choose from apple, pear, plum or all".into())
        );
        assert_eq!(
            parse_list::<Fruit>(" , "),
            Err("no fruit given; e.g. --fruit apple".into())
        );
    }
}
