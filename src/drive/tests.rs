//! The client's pure parts. Its HTTP behaviour is tested against the Graph test server's drive
//! API (`tests/it/drive_client.rs`); the pacer's timing on the paused clock in `pacer`.

use super::*;

#[test]
fn ids_stay_one_path_segment() {
    assert_eq!(enc("b!x-Y_z"), "b!x-Y_z");
    assert_eq!(enc("a/b c?d#e"), "a%2Fb%20c%3Fd%23e");
    assert_eq!(enc(".."), "%2E%2E");
}

#[test]
fn every_status_has_one_meaning_and_a_401_refreshes_only_once() {
    assert_eq!(said(200, false), Said::Ok);
    assert_eq!(said(206, false), Said::Ok);
    assert_eq!(said(302, false), Said::Redirect);
    for s in [429, 503, 509] {
        assert_eq!(said(s, false), Said::Throttled, "{s}");
    }
    assert_eq!(said(401, false), Said::Unauthorized);
    assert_eq!(said(401, true), Said::Forbidden);
    assert_eq!(said(403, false), Said::Forbidden);
    assert_eq!(said(410, false), Said::NotFound);
    for s in [408, 500, 502, 504] {
        assert_eq!(said(s, false), Said::Transient, "{s}");
    }
    for s in [400, 409, 416, 501, 505] {
        assert_eq!(said(s, false), Said::Refused, "{s}");
    }
}
