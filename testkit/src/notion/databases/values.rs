//! A row's property values as `POST /v1/pages` and `PATCH /v1/pages/{id}` send them, checked
//! against its data source's schema [D: reference/page-property-values, reference/request-limits]:
//! a key that names no property is refused (`X is not a property that exists.`), a value of another
//! type too (`X is expected to be multi_select.`), and the size limits hold (text content 2,000
//! characters, 100 rich-text items, a URL, email or phone number 2,000/200/200 characters, 100
//! multi-select options per value). Stricter than Notion where it would quietly add to the schema:
//! a select or multi-select option that the schema does not hold is refused.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::schema::{check_option_name, Property};
use crate::notion::error::ApiError;
use crate::notion::store::model::normalise_rich_text_item;
use crate::notion::validate;

/// Most options one multi-select value holds.
pub const MAX_MULTI_SELECT_VALUES: usize = 100;
/// Longest email and phone number.
pub const MAX_EMAIL: usize = 200;

fn invalid(path: &str, what: impl std::fmt::Display) -> ApiError {
    ApiError::validation(format!("body failed validation: {path} {what}"))
}

/// The values of `properties` (keyed by property name or id), normalised and keyed by property id.
pub fn parse(schema: &[Property], v: &Value) -> Result<BTreeMap<String, Value>, ApiError> {
    let obj = v
        .as_object()
        .ok_or_else(|| invalid("body.properties", "should be an object."))?;
    let mut out = BTreeMap::new();
    for (key, val) in obj {
        let prop = schema
            .iter()
            .find(|p| &p.name == key || &p.id == key)
            .ok_or_else(|| ApiError::validation(format!("{key} is not a property that exists.")))?;
        let path = format!("body.properties.{key}");
        let inner = match val.as_object() {
            Some(o) if o.contains_key(&prop.ty) => {
                for k in o.keys() {
                    if k != &prop.ty && k != "type" && k != "id" {
                        return Err(expected(prop));
                    }
                }
                &o[&prop.ty]
            }
            // Title and rich text may be given as the bare array.
            _ if val.is_array() && matches!(prop.ty.as_str(), "title" | "rich_text") => val,
            _ => return Err(expected(prop)),
        };
        let value = parse_value(prop, inner, &format!("{path}.{}", prop.ty))?;
        out.insert(prop.id.clone(), value);
    }
    Ok(out)
}

fn expected(p: &Property) -> ApiError {
    ApiError::validation(format!("{} is expected to be {}.", p.name, p.ty))
}

fn parse_value(prop: &Property, v: &Value, path: &str) -> Result<Value, ApiError> {
    match prop.ty.as_str() {
        "title" | "rich_text" => {
            validate::validate_rich_text(v, path).map_err(|e| ApiError::body(&e))?;
            Ok(Value::Array(
                v.as_array()
                    .map(|a| a.iter().map(normalise_rich_text_item).collect())
                    .unwrap_or_default(),
            ))
        }
        "number" => match v {
            Value::Null => Ok(Value::Null),
            Value::Number(n) if n.as_f64().is_some_and(f64::is_finite) => Ok(v.clone()),
            _ => Err(invalid(path, "should be a number or `null`.")),
        },
        "checkbox" => match v {
            Value::Bool(_) => Ok(v.clone()),
            _ => Err(invalid(path, "should be a boolean.")),
        },
        "url" => text_limited(v, path, validate::MAX_URL),
        "email" | "phone_number" => text_limited(v, path, MAX_EMAIL),
        "date" => date(v, path),
        "select" => match v {
            Value::Null => Ok(Value::Null),
            Value::Object(o) => Ok(option(prop, o, path)?),
            _ => Err(invalid(path, "should be an object or `null`.")),
        },
        "multi_select" => {
            let arr = v
                .as_array()
                .ok_or_else(|| invalid(path, "should be an array."))?;
            if arr.len() > MAX_MULTI_SELECT_VALUES {
                return Err(invalid(
                    &format!("{path}.length"),
                    format!(
                        "should be ≤ `{MAX_MULTI_SELECT_VALUES}`, instead was `{}`.",
                        arr.len()
                    ),
                ));
            }
            let mut out: Vec<Value> = Vec::with_capacity(arr.len());
            for (i, o) in arr.iter().enumerate() {
                let p = format!("{path}[{i}]");
                let obj = o
                    .as_object()
                    .ok_or_else(|| invalid(&p, "should be an object."))?;
                let picked = option(prop, obj, &p)?;
                if !out.iter().any(|x| x["id"] == picked["id"]) {
                    out.push(picked);
                }
            }
            Ok(Value::Array(out))
        }
        other => Err(ApiError::validation(format!(
            "The test server does not model values of `{other}` properties."
        ))),
    }
}

fn text_limited(v: &Value, path: &str, max: usize) -> Result<Value, ApiError> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::String(s) => {
            let n = s.chars().count();
            if n > max {
                return Err(invalid(
                    &format!("{path}.length"),
                    format!("should be ≤ `{max}`, instead was `{n}`."),
                ));
            }
            Ok(v.clone())
        }
        _ => Err(invalid(path, "should be a string or `null`.")),
    }
}

/// A select option given by `name` or `id`, which the schema must hold.
fn option(prop: &Property, obj: &Map<String, Value>, path: &str) -> Result<Value, ApiError> {
    for k in obj.keys() {
        if !matches!(k.as_str(), "id" | "name" | "color") {
            return Err(invalid(&format!("{path}.{k}"), "should be not present."));
        }
    }
    let found = match (obj.get("id"), obj.get("name")) {
        (Some(Value::String(id)), _) => prop.options.iter().find(|o| &o.id == id),
        (None, Some(Value::String(name))) => {
            check_option_name(name, &format!("{path}.name"))?;
            prop.option(name)
        }
        _ => {
            return Err(invalid(
                path,
                "should have a `name` or an `id` that is a string.",
            ))
        }
    };
    let o = found.ok_or_else(|| {
        let given = obj
            .get("name")
            .or_else(|| obj.get("id"))
            .and_then(Value::as_str)
            .unwrap_or("");
        ApiError::validation(format!(
            "Invalid option `{given}` for {} property {}: the data source has no such option. Add it to the schema first.",
            prop.ty, prop.name
        ))
    })?;
    Ok(json!({"id": o.id, "name": o.name, "color": o.color}))
}

/// ISO 8601: a date (`2024-01-31`) or a date and time with an offset.
fn iso_date(s: &str) -> bool {
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
        || chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

fn date(v: &Value, path: &str) -> Result<Value, ApiError> {
    let obj = match v {
        Value::Null => return Ok(Value::Null),
        Value::Object(o) => o,
        _ => return Err(invalid(path, "should be an object or `null`.")),
    };
    for k in obj.keys() {
        if !matches!(k.as_str(), "start" | "end" | "time_zone") {
            return Err(invalid(&format!("{path}.{k}"), "should be not present."));
        }
    }
    let start = obj.get("start").and_then(Value::as_str).ok_or_else(|| {
        invalid(
            &format!("{path}.start"),
            "should be defined, instead was `undefined`.",
        )
    })?;
    for (k, s) in [
        ("start", Some(start)),
        ("end", obj.get("end").and_then(Value::as_str)),
    ] {
        if let Some(s) = s {
            if !iso_date(s) {
                return Err(invalid(
                    &format!("{path}.{k}"),
                    format!("should be a valid ISO 8601 date string, instead was `\"{s}\"`."),
                ));
            }
        }
    }
    Ok(json!({
        "start": start,
        "end": obj.get("end").cloned().unwrap_or(Value::Null),
        "time_zone": obj.get("time_zone").cloned().unwrap_or(Value::Null),
    }))
}

/// The value a property shows for a row that never set it.
pub fn empty(ty: &str) -> Value {
    match ty {
        "title" | "rich_text" | "multi_select" => json!([]),
        "checkbox" => json!(false),
        _ => Value::Null,
    }
}

/// A value in plain text, for dumps: rich text's `plain_text`, option names joined by `, `, a
/// date's start (and end).
pub fn plain(ty: &str, v: &Value) -> String {
    match ty {
        "title" | "rich_text" => v
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|i| i["plain_text"].as_str())
                    .collect::<String>()
            })
            .unwrap_or_default(),
        "multi_select" => v
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|o| o["name"].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default(),
        "select" => v["name"].as_str().unwrap_or("").to_owned(),
        "date" => match (v["start"].as_str(), v["end"].as_str()) {
            (Some(s), Some(e)) => format!("{s} → {e}"),
            (Some(s), None) => s.to_owned(),
            _ => String::new(),
        },
        _ => match v {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::schema::{parse_new, Ids};
    use super::*;

    fn schema() -> Vec<Property> {
        parse_new(
            &json!({
                "Name": {"title": {}},
                "Tags": {"multi_select": {"options": [{"name": "To Do"}, {"name": "Important"}]}},
                "Created": {"date": {}},
                "Order": {"number": {}},
                "OneNote link": {"url": {}},
            }),
            "p",
            &mut Ids::default(),
        )
        .unwrap()
    }

    #[test]
    fn values_of_the_right_type_are_normalised_and_keyed_by_id() {
        let s = schema();
        let v = parse(
            &s,
            &json!({
                "Name": {"title": [{"text": {"content": "Hello"}}]},
                "Tags": {"multi_select": [{"name": "To Do"}, {"name": "To Do"}]},
                "Created": {"date": {"start": "2024-05-01T10:20:30.000+00:00"}},
                "Order": {"number": 3},
                "OneNote link": {"url": "https://example.com/x"},
            }),
        )
        .unwrap();
        assert_eq!(plain("title", &v["title"]), "Hello");
        let tags = s.iter().find(|p| p.name == "Tags").unwrap();
        assert_eq!(
            v[&tags.id].as_array().unwrap().len(),
            1,
            "a repeated option counts once"
        );
    }

    #[test]
    fn notion_refuses_unknown_properties_wrong_types_unknown_options_and_long_values() {
        let s = schema();
        let msg = |v: Value| parse(&s, &v).unwrap_err().message;
        assert_eq!(
            msg(json!({"Author": {"rich_text": []}})),
            "Author is not a property that exists."
        );
        assert_eq!(
            msg(json!({"Tags": {"select": {"name": "To Do"}}})),
            "Tags is expected to be multi_select."
        );
        assert!(
            msg(json!({"Tags": {"multi_select": [{"name": "Later"}]}})).contains("no such option")
        );
        assert!(msg(json!({"Tags": {"multi_select": [{"name": "a,b"}]}})).contains("commas"));
        let long = "x".repeat(2001);
        assert!(msg(json!({"OneNote link": {"url": long}}))
            .contains("url.length should be ≤ `2000`, instead was `2001`"));
        assert!(msg(json!({"Created": {"date": {"start": "yesterday"}}})).contains("ISO 8601"));
        assert!(msg(json!({"Order": {"number": "3"}})).contains("should be a number"));
        let text = "y".repeat(2001);
        assert!(
            msg(json!({"Name": {"title": [{"text": {"content": text}}]}}))
                .contains("should be ≤ `2000`")
        );
    }
}
