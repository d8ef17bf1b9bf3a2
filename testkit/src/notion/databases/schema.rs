//! A data source's schema (its properties) as Notion documents it for API version 2025-09-03: the
//! property types the server models, select and multi-select options, and the changes `PATCH
//! /v1/data_sources/{id}` makes.
//!
//! Documented rules [D: reference/property-object, reference/update-data-source-properties,
//! reference/create-database, reference/data-source]: exactly one `title` property; option names
//! hold no comma; an option's colour is one of ten; a `status` property cannot be created; the
//! title's type cannot change; a property set to `null` is removed. Stricter where the docs are
//! unsure: option names are at most 100 characters (Notion's answers say so), unique within a
//! property, and a property holds at most [`MAX_OPTIONS`] options; a schema is at most
//! [`MAX_SCHEMA_BYTES`] (the size the docs recommend as the most).

use serde_json::{json, Map, Value};

use crate::notion::error::ApiError;

/// Option colours [D: property-object].
pub const OPTION_COLORS: &[&str] = &[
    "default", "gray", "brown", "orange", "yellow", "green", "blue", "purple", "pink", "red",
];
/// Longest option name, in characters.
pub const MAX_OPTION_NAME: usize = 100;
/// Most options one select or multi-select property holds.
pub const MAX_OPTIONS: usize = 100;
/// Largest schema, as JSON bytes.
pub const MAX_SCHEMA_BYTES: usize = 50_000;
/// Longest property name, in characters.
pub const MAX_PROPERTY_NAME: usize = 100;

/// Property types the server models; any other is refused.
pub const PROPERTY_TYPES: &[&str] = &[
    "title",
    "rich_text",
    "number",
    "select",
    "multi_select",
    "date",
    "url",
    "checkbox",
    "email",
    "phone_number",
];

/// Number formats accepted in a `number` property [D: property-object].
const NUMBER_FORMATS: &[&str] = &[
    "number",
    "number_with_commas",
    "percent",
    "dollar",
    "euro",
    "pound",
    "yen",
    "rupee",
    "won",
    "yuan",
];

/// One option of a select or multi-select property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectOption {
    /// Stable id (kept across renames).
    pub id: String,
    /// Name as shown.
    pub name: String,
    /// One of [`OPTION_COLORS`].
    pub color: String,
}

impl SelectOption {
    /// As the API renders it.
    pub fn render(&self) -> Value {
        json!({"id": self.id, "name": self.name, "color": self.color, "description": null})
    }
}

/// One property (column).
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    /// Stable id (`title` for the title property).
    pub id: String,
    /// Name as shown; the key rows use.
    pub name: String,
    /// One of [`PROPERTY_TYPES`].
    pub ty: String,
    /// Options (select and multi-select only).
    pub options: Vec<SelectOption>,
    /// Number format (number only).
    pub format: Option<String>,
}

impl Property {
    /// As the API renders it inside a data source's `properties`.
    pub fn render(&self) -> Value {
        let config = match self.ty.as_str() {
            "select" | "multi_select" => json!({
                "options": self.options.iter().map(SelectOption::render).collect::<Vec<_>>()
            }),
            "number" => json!({"format": self.format.as_deref().unwrap_or("number")}),
            _ => json!({}),
        };
        let mut v = json!({"id": self.id, "name": self.name, "description": "", "type": self.ty});
        v[&self.ty] = config;
        v
    }

    /// The option called `name` (exact match, as Notion matches names).
    pub fn option(&self, name: &str) -> Option<&SelectOption> {
        self.options.iter().find(|o| o.name == name)
    }
}

/// Ids for new properties and options, unique per server.
#[derive(Debug, Default)]
pub struct Ids(u64);

impl Ids {
    /// A short id such as Notion's (`a%3Bc1`-like strings; here `p1`, `o2`...).
    pub fn next(&mut self, prefix: &str) -> String {
        self.0 += 1;
        format!("{prefix}{}", self.0)
    }
}

fn invalid(path: &str, what: impl std::fmt::Display) -> ApiError {
    ApiError::validation(format!("body failed validation: {path} {what}"))
}

/// The schema of a new data source from `initial_data_source.properties` (or `properties` of a
/// create-data-source request), validated.
pub fn parse_new(v: &Value, path: &str, ids: &mut Ids) -> Result<Vec<Property>, ApiError> {
    let obj = v
        .as_object()
        .ok_or_else(|| invalid(path, "should be an object."))?;
    let mut props: Vec<Property> = Vec::new();
    for (name, config) in obj {
        let p = format!("{path}.{name}");
        let cfg = config
            .as_object()
            .ok_or_else(|| invalid(&p, "should be an object."))?;
        let prop = parse_property(name, cfg, &p, None, ids)?;
        props.push(prop);
    }
    let titles = props.iter().filter(|p| p.ty == "title").count();
    if titles != 1 {
        return Err(invalid(
            path,
            format!("should have exactly one property of type `title`, instead had `{titles}`."),
        ));
    }
    check_size(&props)?;
    Ok(props)
}

/// One property's configuration: its type key (exactly one), an optional `name` and
/// `description`; `existing` is the property being changed, whose options keep their ids.
fn parse_property(
    name: &str,
    cfg: &Map<String, Value>,
    path: &str,
    existing: Option<&Property>,
    ids: &mut Ids,
) -> Result<Property, ApiError> {
    let new_name = match cfg.get("name") {
        None => name.to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(invalid(&format!("{path}.name"), "should be a string.")),
    };
    check_property_name(&new_name, path)?;
    let types: Vec<&str> = cfg
        .keys()
        .map(String::as_str)
        .filter(|k| !matches!(*k, "name" | "description" | "type"))
        .collect();
    for t in &types {
        if *t == "status" {
            return Err(ApiError::validation(
                "Creating new status database properties is currently not supported.",
            ));
        }
        if !PROPERTY_TYPES.contains(t) {
            return Err(invalid(
                &format!("{path}.{t}"),
                format!("should be not present: the property types are {PROPERTY_TYPES:?}."),
            ));
        }
    }
    let ty = match (types.as_slice(), existing) {
        ([t], _) => (*t).to_owned(),
        ([], Some(e)) => e.ty.clone(),
        ([], None) => {
            return Err(invalid(
                path,
                "should define exactly one property type, instead defined none.",
            ))
        }
        _ => {
            return Err(invalid(
                path,
                format!(
                    "should define exactly one property type, instead defined `{}`.",
                    types.len()
                ),
            ))
        }
    };
    if let Some(e) = existing {
        if (e.ty == "title") != (ty == "title") {
            return Err(ApiError::validation(format!(
                "Cannot change the type of property `{}` to or from `title`.",
                e.name
            )));
        }
    }
    let mut prop = Property {
        id: existing.map_or_else(
            || {
                if ty == "title" {
                    "title".to_owned()
                } else {
                    ids.next("p")
                }
            },
            |e| e.id.clone(),
        ),
        name: new_name,
        ty: ty.clone(),
        options: existing
            .filter(|e| e.ty == ty)
            .map(|e| e.options.clone())
            .unwrap_or_default(),
        format: existing.and_then(|e| e.format.clone()),
    };
    let Some(body) = cfg.get(&ty) else {
        return Ok(prop);
    };
    let tp = format!("{path}.{ty}");
    let body = body
        .as_object()
        .ok_or_else(|| invalid(&tp, "should be an object."))?;
    match ty.as_str() {
        "select" | "multi_select" => {
            for k in body.keys() {
                if k != "options" {
                    return Err(invalid(&format!("{tp}.{k}"), "should be not present."));
                }
            }
            if let Some(opts) = body.get("options") {
                prop.options = parse_options(opts, &format!("{tp}.options"), &prop.options, ids)?;
            }
        }
        "number" => {
            for (k, v) in body {
                if k != "format" {
                    return Err(invalid(&format!("{tp}.{k}"), "should be not present."));
                }
                match v.as_str() {
                    Some(f) if NUMBER_FORMATS.contains(&f) => prop.format = Some(f.to_owned()),
                    _ => {
                        return Err(invalid(
                            &format!("{tp}.format"),
                            format!("should be one of {NUMBER_FORMATS:?}, instead was `{v}`."),
                        ))
                    }
                }
            }
        }
        _ => {
            if let Some(k) = body.keys().next() {
                return Err(invalid(&format!("{tp}.{k}"), "should be not present."));
            }
        }
    }
    Ok(prop)
}

fn check_property_name(name: &str, path: &str) -> Result<(), ApiError> {
    let n = name.chars().count();
    if name.trim().is_empty() {
        return Err(invalid(path, "should have a name that is not empty."));
    }
    if n > MAX_PROPERTY_NAME {
        return Err(invalid(
            &format!("{path}.name.length"),
            format!("should be ≤ `{MAX_PROPERTY_NAME}`, instead was `{n}`."),
        ));
    }
    Ok(())
}

/// Checks one option name as a schema or a row value gives it.
pub fn check_option_name(name: &str, path: &str) -> Result<(), ApiError> {
    let n = name.chars().count();
    if name.trim().is_empty() {
        return Err(invalid(path, "should be a non-empty string."));
    }
    if n > MAX_OPTION_NAME {
        return Err(invalid(
            &format!("{path}.length"),
            format!("should be ≤ `{MAX_OPTION_NAME}`, instead was `{n}`."),
        ));
    }
    if name.contains(',') {
        return Err(ApiError::validation(format!(
            "Invalid select option name at {path}: commas (\",\") are not valid for select values, instead was `{name}`."
        )));
    }
    Ok(())
}

/// The options a request gives: the new list (an option named or identified as an existing one
/// keeps its id; one left out is removed).
fn parse_options(
    v: &Value,
    path: &str,
    old: &[SelectOption],
    ids: &mut Ids,
) -> Result<Vec<SelectOption>, ApiError> {
    let arr = v
        .as_array()
        .ok_or_else(|| invalid(path, "should be an array."))?;
    if arr.len() > MAX_OPTIONS {
        return Err(invalid(
            &format!("{path}.length"),
            format!("should be ≤ `{MAX_OPTIONS}`, instead was `{}`.", arr.len()),
        ));
    }
    let mut out: Vec<SelectOption> = Vec::with_capacity(arr.len());
    for (i, o) in arr.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let obj = o
            .as_object()
            .ok_or_else(|| invalid(&p, "should be an object."))?;
        for k in obj.keys() {
            if !matches!(k.as_str(), "id" | "name" | "color" | "description") {
                return Err(invalid(&format!("{p}.{k}"), "should be not present."));
            }
        }
        let by_id = match obj.get("id") {
            None => None,
            Some(Value::String(id)) => Some(old.iter().find(|x| &x.id == id).ok_or_else(|| {
                invalid(
                    &format!("{p}.id"),
                    format!("should be the id of an existing option, instead was `{id}`."),
                )
            })?),
            Some(_) => return Err(invalid(&format!("{p}.id"), "should be a string.")),
        };
        let name = match (obj.get("name"), by_id) {
            (Some(Value::String(n)), _) => n.clone(),
            (None, Some(e)) => e.name.clone(),
            (None, None) => {
                return Err(invalid(
                    &format!("{p}.name"),
                    "should be defined, instead was `undefined`.",
                ))
            }
            (Some(_), _) => return Err(invalid(&format!("{p}.name"), "should be a string.")),
        };
        check_option_name(&name, &format!("{p}.name"))?;
        let existing = by_id.or_else(|| old.iter().find(|x| x.name == name));
        let color = match obj.get("color") {
            None => existing.map_or_else(|| "default".to_owned(), |e| e.color.clone()),
            Some(Value::String(c)) if OPTION_COLORS.contains(&c.as_str()) => {
                if existing.is_some_and(|e| &e.color != c) {
                    return Err(ApiError::validation(format!(
                        "Cannot update color of select with name: {name}."
                    )));
                }
                c.clone()
            }
            Some(c) => {
                return Err(invalid(
                    &format!("{p}.color"),
                    format!("should be one of {OPTION_COLORS:?}, instead was `{c}`."),
                ))
            }
        };
        if out.iter().any(|x| x.name == name) {
            return Err(invalid(
                &format!("{p}.name"),
                format!("should be unique among the options, instead `{name}` was given twice."),
            ));
        }
        out.push(SelectOption {
            id: existing.map_or_else(|| ids.next("o"), |e| e.id.clone()),
            name,
            color,
        });
    }
    Ok(out)
}

fn check_size(props: &[Property]) -> Result<(), ApiError> {
    let size: usize = props.iter().map(|p| p.render().to_string().len()).sum();
    if size > MAX_SCHEMA_BYTES {
        return Err(ApiError::validation(format!(
            "The data source schema is {size} bytes; at most {MAX_SCHEMA_BYTES} are accepted."
        )));
    }
    Ok(())
}

/// Applies `PATCH /v1/data_sources/{id}`'s `properties` to `props`: keyed by a property's name or
/// id; `null` removes it, `{name}` renames it, a type key changes its type or configuration, and an
/// unknown key adds a property. All or nothing.
pub fn apply_update(props: &mut Vec<Property>, v: &Value, ids: &mut Ids) -> Result<(), ApiError> {
    let path = "body.properties";
    let obj = v
        .as_object()
        .ok_or_else(|| invalid(path, "should be an object."))?;
    let mut next = props.clone();
    for (key, change) in obj {
        let p = format!("{path}.{key}");
        let at = next.iter().position(|x| &x.name == key || &x.id == key);
        match (change, at) {
            (Value::Null, Some(i)) => {
                if next[i].ty == "title" {
                    return Err(ApiError::validation(
                        "Cannot delete the title property of a data source.",
                    ));
                }
                next.remove(i);
            }
            (Value::Null, None) => {
                return Err(ApiError::validation(format!(
                    "{key} is not a property that exists."
                )))
            }
            (Value::Object(cfg), Some(i)) => {
                let changed = parse_property(key, cfg, &p, Some(&next[i]), ids)?;
                next[i] = changed;
            }
            (Value::Object(cfg), None) => {
                let added = parse_property(key, cfg, &p, None, ids)?;
                if added.ty == "title" {
                    return Err(invalid(&p, "should not be a second `title` property."));
                }
                next.push(added);
            }
            _ => return Err(invalid(&p, "should be an object or `null`.")),
        }
    }
    for (i, a) in next.iter().enumerate() {
        if next[..i].iter().any(|b| b.name == a.name) {
            return Err(ApiError::validation(format!(
                "A property named `{}` already exists.",
                a.name
            )));
        }
    }
    check_size(&next)?;
    *props = next;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(v: Value) -> Result<Vec<Property>, ApiError> {
        parse_new(
            &v,
            "body.initial_data_source.properties",
            &mut Ids::default(),
        )
    }

    #[test]
    fn a_schema_needs_one_title_and_known_types() {
        assert!(schema(json!({"Name": {"title": {}}, "Tags": {"multi_select": {}}})).is_ok());
        let none = schema(json!({"Tags": {"multi_select": {}}})).unwrap_err();
        assert!(none
            .message
            .contains("exactly one property of type `title`"));
        let two = schema(json!({"A": {"title": {}}, "B": {"title": {}}})).unwrap_err();
        assert!(two.message.contains("instead had `2`"));
        let status = schema(json!({"N": {"title": {}}, "S": {"status": {}}})).unwrap_err();
        assert!(status.message.contains("status"));
        let odd = schema(json!({"N": {"title": {}}, "F": {"formula": {}}})).unwrap_err();
        assert!(odd.message.contains("F.formula should be not present"));
    }

    #[test]
    fn option_names_and_colours_follow_the_documented_rules() {
        let comma = schema(
            json!({"N": {"title": {}}, "T": {"multi_select": {"options": [{"name": "a,b"}]}}}),
        )
        .unwrap_err();
        assert!(comma.message.contains("commas"), "{}", comma.message);
        let long = "x".repeat(101);
        let e = schema(
            json!({"N": {"title": {}}, "T": {"multi_select": {"options": [{"name": long}]}}}),
        )
        .unwrap_err();
        assert!(
            e.message.contains("should be ≤ `100`, instead was `101`"),
            "{}",
            e.message
        );
        let e = schema(json!({"N": {"title": {}}, "T": {"select": {"options": [{"name": "a", "color": "teal"}]}}}))
            .unwrap_err();
        assert!(e.message.contains("color should be one of"));
        let many: Vec<Value> = (0..101).map(|i| json!({"name": format!("t{i}")})).collect();
        let e = schema(json!({"N": {"title": {}}, "T": {"multi_select": {"options": many}}}))
            .unwrap_err();
        assert!(e.message.contains("options.length should be ≤ `100`"));
        let dup = schema(json!({"N": {"title": {}}, "T": {"multi_select": {"options": [{"name": "a"}, {"name": "a"}]}}}))
            .unwrap_err();
        assert!(dup.message.contains("unique"));
    }

    #[test]
    fn updates_keep_option_ids_remove_left_out_options_and_refuse_title_changes() {
        let mut ids = Ids::default();
        let mut props = parse_new(
            &json!({"Name": {"title": {}}, "Tags": {"multi_select": {"options": [{"name": "a", "color": "red"}]}}}),
            "p",
            &mut ids,
        )
        .unwrap();
        let a_id = props[1].options[0].id.clone();
        apply_update(
            &mut props,
            &json!({"Tags": {"multi_select": {"options": [{"name": "b"}, {"name": "a"}]}}}),
            &mut ids,
        )
        .unwrap();
        let tags = props.iter().find(|p| p.name == "Tags").unwrap();
        assert_eq!(tags.option("a").unwrap().id, a_id);
        assert_eq!(tags.option("a").unwrap().color, "red");
        assert_eq!(tags.options.len(), 2);
        apply_update(
            &mut props,
            &json!({"Tags": {"multi_select": {"options": [{"name": "b"}]}}}),
            &mut ids,
        )
        .unwrap();
        assert!(props[1].option("a").is_none());
        let before = props.clone();
        let e =
            apply_update(&mut props, &json!({"Name": {"rich_text": {}}}), &mut ids).unwrap_err();
        assert!(e.message.contains("title"));
        let e = apply_update(&mut props, &json!({"Name": null}), &mut ids).unwrap_err();
        assert!(e.message.contains("title"));
        let e = apply_update(&mut props, &json!({"Nope": null}), &mut ids).unwrap_err();
        assert_eq!(e.message, "Nope is not a property that exists.");
        assert_eq!(props, before, "a refused update changes nothing");
        apply_update(
            &mut props,
            &json!({"Order": {"number": {"format": "number"}}, "Tags": {"name": "Labels"}}),
            &mut ids,
        )
        .unwrap();
        assert!(props
            .iter()
            .any(|p| p.name == "Labels" && p.ty == "multi_select"));
        assert!(props.iter().any(|p| p.name == "Order" && p.ty == "number"));
    }
}
