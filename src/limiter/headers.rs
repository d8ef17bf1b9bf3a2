//! Parsing Graph's throttling hints. They are hints only: each parser returns `None`/`Unknown` for
//! anything it does not recognise, and the limiter stays correct from its own model without them.

use std::time::Duration;

use serde::Serialize;

/// Which budget a throttled response says was exhausted (`x-ms-throttle-scope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleScope {
    /// The signed-in user's budget: only that account slows down.
    User,
    /// The whole app's budget: every account slows down.
    Application,
    /// Missing or unrecognised: treated as both.
    Unknown,
}

/// Parses `x-ms-throttle-scope`, in both documented forms: a bare `User` / `Application`, and
/// `<Scope>/<Limit>/<AppId>/<Id>` such as `Tenant_Application/ReadWrite/<app>/<tenant>` or
/// `Application/Limit/<app>/User`.
pub fn parse_scope_header(v: &str) -> ThrottleScope {
    let v = v.trim();
    let mut parts = v.split('/').map(str::trim);
    let first = parts.next().unwrap_or("");
    let last = v.rsplit('/').next().map(str::trim).unwrap_or("");
    let is = |s: &str, word: &str| s.eq_ignore_ascii_case(word);
    if !v.contains('/') {
        return if is(first, "user") {
            ThrottleScope::User
        } else if is(first, "application") || is(first, "app") {
            ThrottleScope::Application
        } else {
            ThrottleScope::Unknown
        };
    }
    // The long form: the first segment names the budget; a trailing `User` id kind means the
    // per-user share of that app's budget (Microsoft's example `Application/Limit/AppId/User`).
    if is(last, "user") || is(first, "user") || first.to_ascii_lowercase().ends_with("_user") {
        return ThrottleScope::User;
    }
    let f = first.to_ascii_lowercase();
    if f == "application" || f == "app" || f.ends_with("_application") || f == "tenant" {
        return ThrottleScope::Application;
    }
    ThrottleScope::Unknown
}

/// Parses `Retry-After` given in seconds, whole (`30`) or decimal as inner `$batch` responses send it
/// (`2.128`). HTTP dates and negative or absurd values are not used (`None`).
pub fn parse_retry_after(v: &str) -> Option<Duration> {
    let secs: f64 = v.trim().parse().ok()?;
    // A day is far beyond any Graph window; anything larger is garbage, not advice.
    if !secs.is_finite() || !(0.0..=86_400.0).contains(&secs) {
        return None;
    }
    Some(Duration::from_secs_f64(secs))
}

/// Parses `x-ms-throttle-limit-percentage` (`0.85`; Microsoft documents 0.8 to 1.8). Values outside
/// 0 to 10 are rejected as garbage.
pub fn parse_limit_percentage(v: &str) -> Option<f64> {
    let p: f64 = v.trim().parse().ok()?;
    (p.is_finite() && (0.0..=10.0).contains(&p)).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_both_forms() {
        use ThrottleScope::*;
        let cases = [
            ("User", User),
            ("user", User),
            ("Application", Application),
            (" Application ", Application),
            (
                "Tenant_Application/ReadWrite/9f1a-app/72f9-tenant",
                Application,
            ),
            ("Application/Limit/AppId/User", User),
            ("Application/Limit/9f1a/Tenant", Application),
            ("User/ReadWrite/9f1a/5b3c-user", User),
            ("Tenant_User/Read/9f1a/5b3c", User),
            ("", Unknown),
            ("Resource", Unknown),
            ("Whatever/x/y/z", Unknown),
        ];
        for (v, want) in cases {
            assert_eq!(parse_scope_header(v), want, "{v:?}");
        }
    }

    #[test]
    fn retry_after_decimal_and_whole() {
        assert_eq!(
            parse_retry_after("2.128"),
            Some(Duration::from_millis(2128))
        );
        assert_eq!(parse_retry_after("30"), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after(" 0 "), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("NaN"), None);
        assert_eq!(parse_retry_after("1e9"), None);
    }

    #[test]
    fn percentage_range() {
        assert_eq!(parse_limit_percentage("0.85"), Some(0.85));
        assert_eq!(parse_limit_percentage("1.8"), Some(1.8));
        assert_eq!(parse_limit_percentage("abc"), None);
        assert_eq!(parse_limit_percentage("-0.1"), None);
        assert_eq!(parse_limit_percentage("inf"), None);
    }
}
