//! cyclictest's command-line grammar (rt-tests 2.4), read as cyclictest reads it:
//! getopt_long with short clusters (`-mSp95`), `--name=value` and unique prefixes of long
//! names, and cyclictest's own look-ahead for optional values (`-t 4`, `-a 1-3`,
//! `--secaligned 250`). clap cannot express that look-ahead, hence this small parser; what
//! the options mean is plan.rs' part.

use crate::error::UserError;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    Value,
    /// Optional: attached (`-t4`, `--threads=4`) or the next word when cyclictest's
    /// look-ahead accepts it (a non-zero number; for CPU sets also `0…`, `!`, `+`, `a…`).
    OptionalNumber,
    OptionalCpuSet,
}

/// One option of cyclictest's table: short letter, long name, what it takes.
struct Spec {
    short: Option<char>,
    long: &'static str,
    takes: Takes,
}

const fn spec(short: Option<char>, long: &'static str, takes: Takes) -> Spec {
    Spec { short, long, takes }
}

/// cyclictest 2.4's options (`cyclictest --help`), plus `-n`/`--nanosleep` and
/// `-y`/`--policy` which older releases had and older scripts still pass.
const SPECS: &[Spec] = &[
    spec(Some('a'), "affinity", Takes::OptionalCpuSet),
    spec(Some('A'), "aligned", Takes::OptionalNumber),
    spec(Some('b'), "breaktrace", Takes::Value),
    spec(Some('c'), "clock", Takes::Value),
    spec(None, "default-system", Takes::Nothing),
    spec(Some('d'), "distance", Takes::Value),
    spec(Some('D'), "duration", Takes::Value),
    spec(None, "latency", Takes::Value),
    spec(Some('F'), "fifo", Takes::Value),
    spec(Some('h'), "histogram", Takes::Value),
    spec(Some('H'), "histofall", Takes::Value),
    spec(None, "histfile", Takes::Value),
    spec(Some('i'), "interval", Takes::Value),
    spec(None, "json", Takes::Value),
    spec(None, "laptop", Takes::Nothing),
    spec(Some('l'), "loops", Takes::Value),
    spec(None, "mainaffinity", Takes::Value),
    spec(Some('m'), "mlockall", Takes::Nothing),
    spec(Some('M'), "refresh_on_max", Takes::Nothing),
    spec(Some('n'), "nanosleep", Takes::Nothing),
    spec(Some('N'), "nsecs", Takes::Nothing),
    spec(Some('o'), "oscope", Takes::Value),
    spec(Some('p'), "priority", Takes::Value),
    spec(Some('q'), "quiet", Takes::Nothing),
    spec(None, "priospread", Takes::Nothing),
    spec(Some('r'), "relative", Takes::Nothing),
    spec(Some('R'), "resolution", Takes::Nothing),
    spec(None, "secaligned", Takes::OptionalNumber),
    spec(Some('s'), "system", Takes::Nothing),
    spec(None, "smi", Takes::Nothing),
    spec(Some('S'), "smp", Takes::Nothing),
    spec(None, "spike", Takes::Value),
    spec(None, "spike-nodes", Takes::Value),
    spec(Some('t'), "threads", Takes::OptionalNumber),
    spec(None, "tracemark", Takes::Nothing),
    spec(Some('u'), "unbuffered", Takes::Nothing),
    spec(Some('v'), "verbose", Takes::Nothing),
    spec(None, "dbg_cyclictest", Takes::Nothing),
    spec(Some('y'), "policy", Takes::Value),
    spec(None, "help", Takes::Nothing),
    spec(Some('x'), "posix_timers", Takes::Nothing),
];

/// One option as given: its long name (the table's name for a short letter), the
/// spelling typed (for messages) and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenOption {
    pub name: &'static str,
    pub typed: String,
    pub value: Option<String>,
}

/// cyclictest's command line read as getopt_long reads it: the options in the order
/// given, and the words that are not options (an empty argument, a stray `2`, everything
/// after `--`), which cyclictest ignores and so does this (the caller notes them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub options: Vec<GivenOption>,
    pub ignored: Vec<String>,
}

/// Splits cyclictest's command line into options and ignored words.
pub fn parse(args: &[String]) -> Result<Parsed, UserError> {
    let mut given = Vec::new();
    let mut ignored = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        if word == "--" {
            ignored.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let spec = find_long(name, word)?;
            let value = take_value(spec, attached, args, &mut i, word)?;
            given.push(GivenOption {
                name: spec.long,
                typed: format!("--{}", spec.long),
                value,
            });
        } else if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
            let letters: Vec<char> = cluster.chars().collect();
            let mut at = 0;
            while at < letters.len() {
                let letter = letters[at];
                at += 1;
                let spec = SPECS
                    .iter()
                    .find(|s| s.short == Some(letter))
                    .ok_or_else(|| unknown(&format!("-{letter}")))?;
                let rest: String = letters[at..].iter().collect();
                let attached = if spec.takes == Takes::Nothing || rest.is_empty() {
                    None
                } else {
                    at = letters.len();
                    Some(rest.trim_start_matches('=').to_string())
                };
                let typed = format!("-{letter}");
                let value = take_value(spec, attached, args, &mut i, &typed)?;
                given.push(GivenOption {
                    name: spec.long,
                    typed,
                    value,
                });
            }
        } else {
            ignored.push(word.clone());
        }
    }
    Ok(Parsed {
        options: given,
        ignored,
    })
}

fn unknown(typed: &str) -> UserError {
    UserError::Other(format!(
        "latscope cyclictest: unknown option {typed}: it is not one of cyclictest 2.4's options (latscope cyclictest --help lists them)"
    ))
}

/// The long option `name` names: exactly, else as the only one it begins.
fn find_long(name: &str, typed: &str) -> Result<&'static Spec, UserError> {
    if let Some(s) = SPECS.iter().find(|s| s.long == name) {
        return Ok(s);
    }
    let matches: Vec<&Spec> = SPECS
        .iter()
        .filter(|s| !name.is_empty() && s.long.starts_with(name))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(unknown(typed)),
        many => Err(UserError::Other(format!(
            "latscope cyclictest: {typed} is ambiguous: --{}",
            many.iter().map(|s| s.long).collect::<Vec<_>>().join(", --")
        ))),
    }
}

/// The value of an option: attached, else the next word when the option requires one
/// or cyclictest's look-ahead takes it.
fn take_value(
    spec: &Spec,
    attached: Option<String>,
    args: &[String],
    next: &mut usize,
    typed: &str,
) -> Result<Option<String>, UserError> {
    match spec.takes {
        Takes::Nothing => match attached {
            Some(v) => Err(UserError::Other(format!(
                "latscope cyclictest: {typed} takes no value (given '{v}')"
            ))),
            None => Ok(None),
        },
        Takes::Value => match attached {
            Some(v) => Ok(Some(v)),
            None => match args.get(*next) {
                Some(v) => {
                    *next += 1;
                    Ok(Some(v.clone()))
                }
                None => Err(UserError::Other(format!(
                    "latscope cyclictest: {typed} needs a value"
                ))),
            },
        },
        Takes::OptionalNumber | Takes::OptionalCpuSet => {
            if attached.is_some() {
                return Ok(attached);
            }
            let Some(word) = args.get(*next) else {
                return Ok(None);
            };
            let cpu_set = spec.takes == Takes::OptionalCpuSet;
            let leading = leading_number(word);
            let looks_like_value = leading.is_some_and(|n| n != 0)
                || (cpu_set
                    && (word.starts_with('0')
                        || word.starts_with('!')
                        || word.starts_with('+')
                        || word.starts_with('a')));
            if looks_like_value {
                *next += 1;
                Ok(Some(word.clone()))
            } else {
                Ok(None)
            }
        }
    }
}

/// The number a word begins with, as C's atoi reads it (None when it begins with none).
fn leading_number(word: &str) -> Option<u64> {
    let digits: String = word.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    fn names_and_values(text: &str) -> Vec<(&'static str, Option<String>)> {
        parse(&words(text))
            .unwrap()
            .options
            .into_iter()
            .map(|g| (g.name, g.value))
            .collect()
    }

    #[test]
    fn clusters_attached_values_and_look_ahead_read_as_getopt_does() {
        assert_eq!(
            names_and_values("-mSp95 -i1000 -h400 -q"),
            vec![
                ("mlockall", None),
                ("smp", None),
                ("priority", Some("95".into())),
                ("interval", Some("1000".into())),
                ("histogram", Some("400".into())),
                ("quiet", None),
            ]
        );
        assert_eq!(
            names_and_values("-t 4 -a 0 -t -q --secaligned 250 --thr=2"),
            vec![
                ("threads", Some("4".into())),
                ("affinity", Some("0".into())),
                ("threads", None),
                ("quiet", None),
                ("secaligned", Some("250".into())),
                ("threads", Some("2".into())),
            ]
        );
        assert_eq!(
            names_and_values("--json=/tmp/x.json -D 10m --policy fifo"),
            vec![
                ("json", Some("/tmp/x.json".into())),
                ("duration", Some("10m".into())),
                ("policy", Some("fifo".into())),
            ]
        );
    }

    #[test]
    fn unknown_and_ambiguous_options_are_refused() {
        for bad in ["-Z", "--bogus", "--hist=4", "-l"] {
            assert!(parse(&words(bad)).is_err(), "{bad}");
        }
    }

    /// getopt_long skips words that are not options wherever they are, and everything
    /// after `--`: `-S 2` (a stray count), an empty `"${HISTOGRAM}"`.
    #[test]
    fn words_that_are_not_options_are_ignored_as_getopt_does() {
        let args: Vec<String> = ["-q", "", "-S", "2", "-p", "60", "--", "-l", "5"]
            .map(String::from)
            .to_vec();
        let parsed = parse(&args).unwrap();
        assert_eq!(parsed.ignored, ["", "2", "-l", "5"]);
        let names: Vec<&str> = parsed.options.iter().map(|g| g.name).collect();
        assert_eq!(names, ["quiet", "smp", "priority"]);
    }
}
