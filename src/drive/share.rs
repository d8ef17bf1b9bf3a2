//! The sharing token of a web URL, for Graph's shares API (`GET /shares/{token}/driveItem`).
//!
//! Microsoft's "Access shared items" page (<https://learn.microsoft.com/en-us/graph/api/shares-get>,
//! "Encoding sharing URLs"): base64 the URL's UTF-8 bytes, drop the trailing `=`, replace `/` with
//! `_` and `+` with `-`, and prefix `u!`.

use base64::Engine;

/// The `u!` token of `url` for `/shares/{token}`.
pub fn share_token(url: &str) -> String {
    // Unpadded base64url is exactly the documented steps: the same alphabet with `-` and `_` in
    // place of `+` and `/`, and no padding.
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(url.as_bytes());
    format!("u!{b64}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page's C# steps, as written there, to check the shortcut against.
    fn documented_steps(url: &str) -> String {
        let b64 = base64::engine::general_purpose::STANDARD.encode(url.as_bytes());
        format!(
            "u!{}",
            b64.trim_end_matches('=')
                .replace('/', "_")
                .replace('+', "-")
        )
    }

    #[test]
    fn the_documented_example_encodes_as_the_documented_steps_do() {
        // The page's example URL.
        let url = "https://onedrive.live.com/redir?resid=1231244193912!12&authKey=1201919!12921!1";
        assert_eq!(
            share_token(url),
            "u!aHR0cHM6Ly9vbmVkcml2ZS5saXZlLmNvbS9yZWRpcj9yZXNpZD0xMjMxMjQ0MTkzOTEyITEyJmF1dGhLZXk9MTIwMTkxOSExMjkyMSEx"
        );
        assert_eq!(share_token(url), documented_steps(url));
    }

    #[test]
    fn slash_plus_and_padding_are_replaced() {
        // Standard base64 of these holds `/`, `+` and `=`.
        let url = "https://contoso.sharepoint.com/:o:/s/Team/Eb?e=~~>";
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(url),
            "aHR0cHM6Ly9jb250b3NvLnNoYXJlcG9pbnQuY29tLzpvOi9zL1RlYW0vRWI/ZT1+fj4="
        );
        assert_eq!(
            share_token(url),
            "u!aHR0cHM6Ly9jb250b3NvLnNoYXJlcG9pbnQuY29tLzpvOi9zL1RlYW0vRWI_ZT1-fj4"
        );
        for url in [url, "https://x/?a=>>>?", "https://x/?>?~", "é"] {
            assert_eq!(share_token(url), documented_steps(url), "{url}");
        }
    }
}
