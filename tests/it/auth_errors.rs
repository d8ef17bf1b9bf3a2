//! The refusals tenants and admins really answer, each with a message that says what to change.

use crate::auth_support;

use std::collections::HashMap;

use auth_support::{alice, open, seed, world, World};
use notebridge::auth::{AuthError, TokenSource};
use notebridge::cli::exit::{Exit, Failure};
use notebridge::clock::Clock;
use notebridge::settings::{DefaultDirs, FlagSettings, Settings};
use notebridge_testkit::auth::CodeScript;

#[tokio::test]
async fn a_single_tenant_app_through_common_says_to_set_the_tenant() {
    let w = World::start(|c| {
        c.single_tenant = Some("contoso.onmicrosoft.com".into());
        c.scripts.push_back(CodeScript::approve(alice(), 1));
    })
    .await;
    let out = w.run(&["login"]).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("NOTEBRIDGE_TENANT") && out.stderr.contains("AADSTS50194"),
        "{}",
        out.stderr
    );
    let out = w
        .bin(&["login"])
        .env("NOTEBRIDGE_TENANT", "contoso.onmicrosoft.com")
        .run()
        .await;
    assert_eq!(out.code, Some(0), "with the tenant set: {out:?}");
}

#[tokio::test]
async fn conditional_access_blocking_the_device_code_flow_names_the_admin() {
    let w = World::start(|c| c.scripts.push_back(CodeScript::blocked(1))).await;
    let out = w.run(&["login"]).await;
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains("Conditional Access")
            && out.stderr.contains("admin must allow it")
            && out.stderr.contains("AADSTS53003"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_permission_without_consent_is_named_with_the_admin_consent_fix() {
    let w = world().await;
    let db = open(&w);
    seed(&w, &db, "alice", &alice());
    let mut env: HashMap<String, String> = w.env().into_iter().collect();
    env.insert(
        "NOTEBRIDGE_SCOPES".into(),
        "offline_access User.Read Notes.Read Notes.Read.All".into(),
    );
    let settings =
        Settings::resolve(&FlagSettings::default(), &env, DefaultDirs::default()).unwrap();
    let ts = TokenSource::new(db.clone(), &settings, Clock::system()).unwrap();
    let e = ts.access_token("alice").await.unwrap_err();
    assert!(matches!(e, AuthError::ConsentRequired { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("Notes.Read.All") && msg.contains("admin consent") && msg.contains("alice"),
        "{msg}"
    );
    assert_eq!(Failure::from(e).exit(), Exit::SignIn);
}
