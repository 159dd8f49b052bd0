//! The top-level keys of a JSON input, read without building the document: which kind of
//! file it is (latscope's result, cyclictest's `--json`, a doctor file) and its schema
//! version, before it is read as that kind straight into its types. A `serde_json::Value`
//! tree costs 32 bytes and more per number or key: a 52 MB cyclictest file took 2.4 GB as
//! one (issue 34, item 7). Hand-written visitors: serde's derive would buffer an unknown
//! value (an untagged enum) or refuse a document that is not an object.

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// What the top level of a JSON document holds.
#[derive(Debug, Default, PartialEq)]
pub struct TopKeys {
    /// It is an object (else every field below is empty).
    pub object: bool,
    /// `schema_version`: `Some(Some(n))` a whole number, `Some(None)` anything else.
    pub schema_version: Option<Option<u64>>,
    /// `schema` when it is a short string (a doctor file's `latscope-doctor/1`).
    pub schema: Option<String>,
    /// cyclictest's `rt_test_version:`.
    pub rt_test_version: bool,
    /// cyclictest's `thread` and `num_threads`.
    pub thread: bool,
    pub num_threads: bool,
}

impl TopKeys {
    /// Whether the document looks like cyclictest's output.
    pub fn is_cyclictest(&self) -> bool {
        self.rt_test_version || (self.thread && self.num_threads)
    }

    /// Whether it is a `doctor --export-json` file.
    pub fn is_doctor(&self) -> bool {
        self.schema
            .as_deref()
            .is_some_and(|s| s.starts_with("latscope-doctor/"))
    }
}

/// Reads the top-level keys of `text` (a JSON document; an error when it is none),
/// skipping every value but the few read, in one pass that allocates nothing per value.
pub fn top_keys(text: &str) -> serde_json::Result<TopKeys> {
    let mut de = serde_json::Deserializer::from_str(text);
    let keys = (&mut de).deserialize_any(Top)?;
    de.end()?;
    Ok(keys)
}

/// Skips what remains of a sequence.
fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Skips what remains of a map.
fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A visitor that takes any value: `$ok` for the kinds named, the default for the rest,
/// whose contents are skipped.
macro_rules! any_value_visitor {
    ($name:ident, $value:ty, $what:literal, { $($method:item)* }) => {
        struct $name;
        impl<'de> Visitor<'de> for $name {
            type Value = $value;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str($what)
            }
            $($method)*
            fn visit_bool<E>(self, _: bool) -> Result<$value, E> { Ok(Default::default()) }
            fn visit_i64<E>(self, _: i64) -> Result<$value, E> { Ok(Default::default()) }
            fn visit_f64<E>(self, _: f64) -> Result<$value, E> { Ok(Default::default()) }
            fn visit_unit<E>(self) -> Result<$value, E> { Ok(Default::default()) }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<$value, A::Error> {
                drain_seq(seq).map(|()| Default::default())
            }
        }
    };
}

any_value_visitor!(Version, Option<u64>, "a schema version", {
    fn visit_u64<E>(self, v: u64) -> Result<Option<u64>, E> {
        Ok(Some(v))
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<u64>, E> {
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<u64>, A::Error> {
        drain_map(map).map(|()| None)
    }
});

any_value_visitor!(Schema, Option<String>, "a schema name", {
    fn visit_u64<E>(self, _: u64) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, v: &str) -> Result<Option<String>, E> {
        Ok((v.len() <= 64).then(|| v.to_string()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<String>, A::Error> {
        drain_map(map).map(|()| None)
    }
});

/// Deserializes one value with `visitor` (`next_value_seed`'s seed).
struct With<V>(V);

impl<'de, V: Visitor<'de>> serde::de::DeserializeSeed<'de> for With<V> {
    type Value = V::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_any(self.0)
    }
}

any_value_visitor!(Top, TopKeys, "a JSON document", {
    fn visit_u64<E>(self, _: u64) -> Result<TopKeys, E> {
        Ok(TopKeys::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<TopKeys, E> {
        Ok(TopKeys::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopKeys, A::Error> {
        let mut keys = TopKeys {
            object: true,
            ..TopKeys::default()
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schema_version" => keys.schema_version = Some(map.next_value_seed(With(Version))?),
                "schema" => keys.schema = map.next_value_seed(With(Schema))?,
                other => {
                    map.next_value::<IgnoredAny>()?;
                    match other {
                        "rt_test_version:" => keys.rt_test_version = true,
                        "thread" => keys.thread = true,
                        "num_threads" => keys.num_threads = true,
                        _ => {}
                    }
                }
            }
        }
        Ok(keys)
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_and_version_are_read_from_the_top_level_only() {
        let run = top_keys(r#"{"schema_version": 2, "scenarios": [{"schema_version": "x"}]}"#);
        assert_eq!(run.unwrap().schema_version, Some(Some(2)));
        let odd = top_keys(r#"{"schema_version": [1, {"a": 2}], "tool": "x"}"#).unwrap();
        assert_eq!(odd.schema_version, Some(None));
        let ct = top_keys(r#"{"thread": {"0": {}}, "num_threads": 1}"#).unwrap();
        assert!(ct.is_cyclictest() && !ct.is_doctor());
        let doctor = top_keys(r#"{"schema": "latscope-doctor/1", "verdict": "ready"}"#).unwrap();
        assert!(doctor.is_doctor());
        for not_an_object in ["[1, 2, [3]]", "\"text\"", "7", "null", "true", "-1.5"] {
            let keys = top_keys(not_an_object).unwrap();
            assert_eq!(keys, TopKeys::default(), "{not_an_object}");
        }
        assert!(top_keys("{\"a\": 1} trailing").is_err());
        assert!(top_keys("{\"a\": ").is_err());
    }
}
