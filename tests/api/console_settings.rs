//! The console's site settings and the site's users (#25), over the real server: each setting saved and
//! then shown by `sitebot site show`; wrong values 422 with the form kept and nothing saved; the test
//! event at a real receiver, signed; a new signing secret shown once while the old one still signs; a
//! new bearer token (the old one refused by /v1); disable and delete behind a typed confirmation, delete
//! for admins only; invitations that end in a signed-in editor; owners kept to their own site and
//! viewers' and editors' hand-made POSTs refused. `tests/browser/settings.mjs` shows the pages in Chromium.

use reqwest::StatusCode;
use serde_json::json;
use sitebot::domain::{AnswerMode, SiteId, SiteRole, Tier};
use sitebot::store::users::Grant;
use standardwebhooks::Webhook;

use crate::console::{PASSWORD, add_user, audit_actions, csrf_of, get, post_form, session_cookie};
use crate::helpers::{TestApp, new_site, spawn_app_with, with_webhook};
use crate::receiver::Receiver;

/// A user made as `sitebot user add` makes one (an admin without `grant`), signed in through the setup
/// link: the session cookie and its CSRF token.
async fn signed_in(app: &TestApp, email: &str, grant: Option<Grant>) -> (String, String) {
    let link = add_user(app, email, grant).await;
    set_password(app, &link).await
}

/// Uses a setup link: the session cookie it signs in with, and its CSRF token.
async fn set_password(app: &TestApp, link: &str) -> (String, String) {
    let resp = post_form(app, link, None, Some(&app.base), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{}", resp.text().await.unwrap());
    let cookie = session_cookie(resp.headers()).expect("signed in");
    let csrf = csrf_of(app, &cookie).await;
    (cookie, csrf)
}

/// A console POST of a signed-in user: the form with the session's CSRF token, from the console's origin.
async fn post(app: &TestApp, path: &str, who: &(String, String), form: &[(&str, &str)]) -> reqwest::Response {
    let mut fields = vec![("csrf", who.1.as_str())];
    fields.extend_from_slice(form);
    post_form(app, path, Some(&who.0), Some(&app.base), &fields).await
}

fn grant(site: SiteId, role: SiteRole) -> Option<Grant> {
    Some(Grant { site_id: site, role })
}

async fn site(app: &TestApp, id: SiteId) -> Option<sitebot::store::Site> {
    app.state.store.run(move |s| s.site(id).get()).await.unwrap()
}

fn config() -> sitebot::config::Config {
    crate::webhooks::webhook_config()
}

/// The value of the input `id` on a page (a secret or link shown once).
fn input_value(page: &str, id: &str) -> String {
    let at = page.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no #{id} in {page}"));
    let rest = &page[at..];
    let v = rest.find("value=\"").unwrap() + "value=\"".len();
    rest[v..].split('"').next().unwrap().to_owned()
}

/// `sitebot site show ID --json` against the test server's data directory, as an operator runs it.
fn site_show(app: &TestApp, id: SiteId) -> serde_json::Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sitebot"));
    cmd.arg("--data-dir").arg(app.data_dir.path()).args(["site", "show", &id.to_string(), "--json"]);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SITEBOT_")) {
        cmd.env_remove(k);
    }
    let out = cmd.output().expect("run sitebot");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[tokio::test]
async fn an_owner_saves_each_setting_and_the_cli_shows_it_and_a_wrong_value_saves_nothing() {
    let app = spawn_app_with(config()).await;
    let rx = Receiver::start().await;
    let (s, _) = app.create_site(Tier::Pro).await;
    let owner = signed_in(&app, "owner@example.com", grant(s.id, SiteRole::Owner)).await;
    let settings = format!("/console/sites/{}/settings", s.id);

    let page = get(&app, &settings, Some(&owner.0)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    for section in ["id=\"site\"", "id=\"webhook\"", "id=\"credentials\"", "id=\"danger\"", "name=\"hours\""] {
        assert!(page.contains(section), "{section} on the page");
    }
    assert!(!page.contains("id=\"site-tier\"") && !page.contains("/settings/delete"), "tier and delete are for admins");

    let form = [("name", "Zahnarzt Müller"), ("lang", "de-ch"), ("currency", "chf"), ("answers", "generative")];
    let saved = post(&app, &format!("{settings}/site"), &owner, &form).await;
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    assert!(saved.headers()["location"].to_str().unwrap().contains("saved=site"));
    let shown = site_show(&app, s.id);
    assert_eq!((shown["name"].as_str(), shown["lang"].as_str(), shown["currency"].as_str()), (Some("Zahnarzt Müller"), Some("de-CH"), Some("CHF")), "{shown}");
    assert_eq!(shown["answers"], "generative");
    let page = get(&app, &format!("{settings}?saved=site"), Some(&owner.0)).await.text().await.unwrap();
    assert!(page.contains("value=\"Zahnarzt Müller\"") && page.contains("Saved."), "{page}");

    // Wrong values: 422, the page with what was typed and why, nothing saved.
    for (field, bad, why) in [("lang", "e!n", "BCP 47"), ("currency", "XYZ", "ISO 4217"), ("answers", "poetry", "answer mode"), ("name", " ", "Name")] {
        let mut form = vec![("name", "Typed <b>name</b>"), ("lang", "en"), ("currency", "EUR"), ("answers", "extractive")];
        form.retain(|(k, _)| *k != field);
        form.push((field, bad));
        let refused = post(&app, &format!("{settings}/site"), &owner, &form).await;
        assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY, "{field}={bad}");
        let page = refused.text().await.unwrap();
        assert!(page.contains(why) && page.contains("role=\"alert\""), "{field}: {page}");
        if field != "name" {
            assert!(page.contains("value=\"Typed &#60;b&#62;name&#60;/b&#62;\""), "the form is kept, escaped: {page}");
        }
        let now = site(&app, s.id).await.unwrap();
        assert_eq!((now.name.as_str(), now.answers), ("Zahnarzt Müller", AnswerMode::Generative), "nothing saved");
    }
    // The tier is an admin's: an owner's POST is refused.
    let form = [("name", "Zahnarzt Müller"), ("lang", "de-CH"), ("currency", "CHF"), ("answers", "generative"), ("tier", "enterprise")];
    assert_eq!(post(&app, &format!("{settings}/site"), &owner, &form).await.status(), StatusCode::FORBIDDEN);
    assert_eq!(site(&app, s.id).await.unwrap().tier, Tier::Pro);

    // The webhook: URL and events, then the CLI shows them; a wrong URL or event saves nothing.
    let url = rx.url("/crm");
    let form = [("url", url.as_str()), ("events", "lead.captured"), ("events", "query.completed")];
    assert_eq!(post(&app, &format!("{settings}/webhook"), &owner, &form).await.status(), StatusCode::SEE_OTHER);
    let shown = site_show(&app, s.id);
    assert_eq!(shown["webhookUrl"], url.as_str(), "{shown}");
    assert_eq!(shown["webhookEvents"], json!(["lead.captured", "query.completed"]));
    for form in [vec![("url", "ftp://crm.example.com/x"), ("events", "lead.captured")], vec![("url", "https://crm.example.com/x"), ("events", "lead.lost")]] {
        let refused = post(&app, &format!("{settings}/webhook"), &owner, &form).await;
        assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let page = refused.text().await.unwrap();
        assert!(page.contains(&format!("value=\"{}\"", form[0].1)), "the URL typed is kept");
        assert_eq!(site_show(&app, s.id)["webhookUrl"], url.as_str(), "nothing saved");
    }
    // An empty URL removes the webhook.
    assert_eq!(post(&app, &format!("{settings}/webhook"), &owner, &[("url", ""), ("events", "lead.captured")]).await.status(), StatusCode::SEE_OTHER);
    assert!(site_show(&app, s.id)["webhookUrl"].is_null());

    let actions = audit_actions(&app);
    for a in ["site_settings_changed", "webhook_changed"] {
        assert!(actions.iter().any(|x| x == a), "{a} in {actions:?}");
    }
}

#[tokio::test]
async fn the_test_event_reaches_the_receiver_signed_and_a_new_secret_is_shown_once_while_the_old_one_still_signs() {
    let app = spawn_app_with(config()).await;
    let rx = Receiver::start().await;
    let (s, creds) = app.create_site_with(with_webhook(new_site(Tier::Pro), &rx.url("/crm"))).await;
    let old_secret = creds.webhook_secret.unwrap();
    let owner = signed_in(&app, "owner@example.com", grant(s.id, SiteRole::Owner)).await;
    let settings = format!("/console/sites/{}/settings", s.id);

    rx.script([crate::receiver::Reply::Status(202)]);
    let tested = post(&app, &format!("{settings}/webhook/test"), &owner, &[]).await;
    assert_eq!(tested.status(), StatusCode::OK);
    let page = tested.text().await.unwrap();
    assert!(page.contains("Test event sent") && page.contains("202 ("), "{page}");
    // The receiver is on loopback, a private network: its status and timing are shown, never its body
    // ("answered 202"), which could be any internal service's answer.
    assert!(!page.contains("answered 202") && page.contains("Not shown: the receiver is on a private network"), "{page}");
    let got = rx.wait_for(1, std::time::Duration::from_secs(5)).await;
    assert_eq!(got[0].json()["type"], "webhook.test");
    assert!(page.contains(&got[0].id()), "the page names the event it sent");
    Webhook::new(&old_secret).unwrap().verify(&got[0].body, &got[0].headers).expect("signed with the site's secret");

    // A failing receiver: the page says so.
    rx.script([crate::receiver::Reply::Status(500)]);
    let page = post(&app, &format!("{settings}/webhook/test"), &owner, &[]).await.text().await.unwrap();
    assert!(page.contains("500 (") && page.contains("receiver answered 500"), "{page}");

    // A new signing secret: shown in the answer, never again.
    let rotated = post(&app, &format!("{settings}/rotate-secret"), &owner, &[]).await;
    assert_eq!(rotated.status(), StatusCode::OK);
    let new_secret = input_value(&rotated.text().await.unwrap(), "shown-secret");
    assert!(new_secret.starts_with("whsec_") && new_secret != old_secret, "{new_secret}");
    let again = get(&app, &settings, Some(&owner.0)).await.text().await.unwrap();
    assert!(!again.contains(&new_secret), "the secret is shown once");

    // A real delivery (a lead) within the 24 hours verifies with the new secret and with the old one.
    let lead = app.client.post(app.url("/v1/leads")).header("X-Site-Id", s.id.to_string()).json(&json!({"email": "ada@example.com"})).send().await.unwrap();
    assert_eq!(lead.status(), 202);
    app.deliver_until(|| rx.requests().iter().any(|r| r.json()["type"] == "lead.captured")).await;
    let delivered = rx.requests().into_iter().find(|r| r.json()["type"] == "lead.captured").unwrap();
    Webhook::new(&new_secret).unwrap().verify(&delivered.body, &delivered.headers).expect("signed with the new secret");
    Webhook::new(&old_secret).unwrap().verify(&delivered.body, &delivered.headers).expect("and still with the old one");
    // Once the 24 hours are over, only the new one signs.
    app.db().execute("UPDATE sites SET prev_secret_until = 1 WHERE id = ?1", [s.id.to_string()]).unwrap();
    post(&app, &format!("{settings}/webhook/test"), &owner, &[]).await;
    let last = rx.requests().pop().unwrap();
    assert_eq!(last.json()["type"], "webhook.test");
    Webhook::new(&new_secret).unwrap().verify(&last.body, &last.headers).expect("the new secret signs");
    assert!(Webhook::new(&old_secret).unwrap().verify(&last.body, &last.headers).is_err(), "the old secret no longer does");

    // Without a URL there is nothing to test: 422 and why.
    post(&app, &format!("{settings}/webhook"), &owner, &[("url", ""), ("events", "lead.captured")]).await;
    let none = post(&app, &format!("{settings}/webhook/test"), &owner, &[]).await;
    assert_eq!(none.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(none.text().await.unwrap().contains("Save a webhook URL first"));
    let actions = audit_actions(&app);
    for a in ["webhook_tested", "webhook_secret_rotated"] {
        assert!(actions.iter().any(|x| x == a), "{a} in {actions:?}");
    }
}

#[tokio::test]
async fn a_new_bearer_token_is_shown_once_and_the_old_one_is_refused_at_once() {
    let app = spawn_app_with(config()).await;
    let (s, creds) = app.create_site(Tier::Pro).await;
    let (starter, _) = app.create_site(Tier::Starter).await;
    let old = creds.bearer_token.unwrap();
    let owner = signed_in(&app, "owner@example.com", grant(s.id, SiteRole::Owner)).await;
    let lead = |token: String| {
        let app = &app;
        async move { app.client.post(app.url("/v1/leads")).bearer_auth(token).json(&json!({"email": "a@example.com"})).send().await.unwrap() }
    };
    assert_eq!(lead(old.clone()).await.status(), 202);

    let rotated = post(&app, &format!("/console/sites/{}/settings/rotate-token", s.id), &owner, &[]).await;
    assert_eq!(rotated.status(), StatusCode::OK);
    let page = rotated.text().await.unwrap();
    assert!(page.contains("shown only now"), "{page}");
    let new = input_value(&page, "shown-secret");
    assert_ne!(new, old);
    crate::helpers::problem(lead(old).await, 401, "invalid_token").await;
    assert_eq!(lead(new.clone()).await.status(), 202);
    assert!(!get(&app, &format!("/console/sites/{}/settings", s.id), Some(&owner.0)).await.text().await.unwrap().contains(&new));
    assert!(audit_actions(&app).iter().any(|a| a == "bearer_token_rotated"));

    // A starter site has no token: the page says so and nothing changes.
    let owner_b = signed_in(&app, "starter@example.com", grant(starter.id, SiteRole::Owner)).await;
    let refused = post(&app, &format!("/console/sites/{}/settings/rotate-token", starter.id), &owner_b, &[]).await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.text().await.unwrap().contains("starter tier has no bearer token"));
    assert!(!site(&app, starter.id).await.unwrap().has_bearer_token);
}

#[tokio::test]
async fn disabling_and_deleting_need_the_site_typed_again_and_only_an_admin_deletes() {
    let app = spawn_app_with(config()).await;
    let (s, _) = app.create_site(Tier::Pro).await;
    let owner = signed_in(&app, "owner@example.com", grant(s.id, SiteRole::Owner)).await;
    let admin = signed_in(&app, "admin@example.com", None).await;
    let settings = format!("/console/sites/{}/settings", s.id);
    let lead = || app.client.post(app.url("/v1/leads")).header("X-Site-Id", s.id.to_string()).json(&json!({"email": "a@example.com"})).send();

    let wrong = post(&app, &format!("{settings}/disable"), &owner, &[("confirm", "Test Sit")]).await;
    assert_eq!(wrong.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(wrong.text().await.unwrap().contains("neither the site"));
    assert!(site(&app, s.id).await.unwrap().enabled);
    let off = post(&app, &format!("{settings}/disable"), &owner, &[("confirm", " Test Site ")]).await;
    assert_eq!(off.status(), StatusCode::SEE_OTHER);
    crate::helpers::problem(lead().await.unwrap(), 403, "site_disabled").await;
    assert!(get(&app, &settings, Some(&owner.0)).await.text().await.unwrap().contains("This site is disabled"));
    assert_eq!(post(&app, &format!("{settings}/enable"), &owner, &[]).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(lead().await.unwrap().status(), 202);
    let actions = audit_actions(&app);
    for a in ["site_disabled", "site_enabled"] {
        assert!(actions.iter().any(|x| x == a), "{a} in {actions:?}");
    }

    // Deleting: not for an owner, even typed right.
    let refused = post(&app, &format!("{settings}/delete"), &owner, &[("confirm", &s.id.to_string())]).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(site(&app, s.id).await.is_some());
    // An admin sees the tier and the delete form; a wrong confirmation deletes nothing.
    let page = get(&app, &settings, Some(&admin.0)).await.text().await.unwrap();
    assert!(page.contains("id=\"site-tier\"") && page.contains("/settings/delete"));
    let wrong = post(&app, &format!("{settings}/delete"), &admin, &[("confirm", "")]).await;
    assert_eq!(wrong.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(site(&app, s.id).await.is_some());
    // What the server holds of the site in memory goes with it: here, its embedded English terms.
    let nearest = app.state.knowledge.nearest.as_ref().unwrap();
    nearest.build_now(&app.state.knowledge.embedder, &s.id, &app.state.knowledge.bm25.build_now(&app.state.store, &s.id).unwrap()).unwrap();
    assert!(nearest.get(&s.id).is_some());
    assert!(app.data_dir.path().join("indexes").join(format!("{}.terms", s.id)).exists());
    let deleted = post(&app, &format!("{settings}/delete"), &admin, &[("confirm", &s.id.to_string())]).await;
    assert_eq!((deleted.status(), deleted.headers()["location"].to_str().unwrap()), (StatusCode::SEE_OTHER, "/console/sites"));
    assert!(site(&app, s.id).await.is_none());
    assert!(nearest.get(&s.id).is_none());
    let indexes: Vec<String> =
        std::fs::read_dir(app.data_dir.path().join("indexes")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!indexes.iter().any(|f| f.starts_with(&s.id.to_string())), "the site's saved terms and index files are gone: {indexes:?}");
    assert_eq!(app.count("SELECT count(*) FROM leads WHERE site_id = ?1", [s.id.to_string()]), 0);
    assert_eq!(get(&app, &settings, Some(&admin.0)).await.status(), StatusCode::NOT_FOUND);
    crate::helpers::problem(lead().await.unwrap(), 404, "site_not_found").await;
    // The site's own audit entries went with it (as with `sitebot site delete`); the deletion's is kept.
    let (actor, detail): (String, String) = app
        .db()
        .query_row("SELECT actor, detail FROM audit_log WHERE action = 'site_deleted' AND site_id IS NULL", [], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap();
    assert!(actor == "admin@example.com" && detail.contains(&s.id.to_string()), "{actor} {detail}");
    assert_eq!(app.count("SELECT count(*) FROM audit_log WHERE site_id = ?1", [s.id.to_string()]), 0);
}

#[tokio::test]
async fn an_admin_changes_the_tier_and_a_first_bearer_token_is_shown_once() {
    let app = spawn_app_with(config()).await;
    let (s, _) = app.create_site(Tier::Starter).await;
    let admin = signed_in(&app, "admin@example.com", None).await;
    let form = [("name", "Test Site"), ("lang", "en"), ("currency", "EUR"), ("answers", "extractive"), ("tier", "pro")];
    let up = post(&app, &format!("/console/sites/{}/settings/site", s.id), &admin, &form).await;
    assert_eq!(up.status(), StatusCode::OK);
    let token = input_value(&up.text().await.unwrap(), "shown-secret");
    assert_eq!(site_show(&app, s.id)["tier"], "pro");
    let resp = app.client.post(app.url("/v1/leads")).bearer_auth(token).json(&json!({"email": "a@example.com"})).send().await.unwrap();
    assert_eq!(resp.status(), 202);
}

#[tokio::test]
async fn an_owner_invites_an_editor_who_signs_in_through_the_setup_link_and_the_site_keeps_an_owner() {
    let app = spawn_app_with(config()).await;
    let (s, _) = app.create_site(Tier::Pro).await;
    let owner = signed_in(&app, "owner@example.com", grant(s.id, SiteRole::Owner)).await;
    let users = format!("/console/sites/{}/users", s.id);

    let list = get(&app, &users, Some(&owner.0)).await;
    assert_eq!(list.status(), StatusCode::OK);
    assert!(list.text().await.unwrap().contains("owner@example.com"));

    let invited = post(&app, &format!("{users}/invite"), &owner, &[("email", "ed@example.com"), ("role", "editor")]).await;
    assert_eq!(invited.status(), StatusCode::OK);
    let page = invited.text().await.unwrap();
    let link = input_value(&page, "setup-link");
    assert!(link.starts_with(&format!("{}/console/setup/", app.base)) && link.ends_with(&format!("?site={}", s.id)), "{link}");
    // The link works once, for the editor, who then sees the site and none of the owner's pages.
    let path = link.strip_prefix(&app.base).unwrap();
    assert!(get(&app, path, None).await.text().await.unwrap().contains("ed@example.com"));
    let editor = set_password(&app, path).await;
    assert!(get(&app, "/console/sites", Some(&editor.0)).await.text().await.unwrap().contains(&s.id.to_string()));
    assert_eq!(get(&app, &users, Some(&editor.0)).await.status(), StatusCode::FORBIDDEN);
    assert!(!get(&app, &format!("/console/sites/{}", s.id), Some(&editor.0)).await.text().await.unwrap().contains("/users\""));
    assert!(!get(&app, &users, Some(&owner.0)).await.text().await.unwrap().contains(&link), "the link is shown once");

    // Roles: no more than owner; the last owner stays.
    let ed_id = app.state.store.run(|s| s.users().by_email("ed@example.com")).await.unwrap().unwrap().id.to_string();
    let owner_id = app.state.store.run(|s| s.users().by_email("owner@example.com")).await.unwrap().unwrap().id.to_string();
    let admin = post(&app, &format!("{users}/{ed_id}/role"), &owner, &[("role", "admin")]).await;
    assert_eq!(admin.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let no = post(&app, &format!("{users}/invite"), &owner, &[("email", "eve@example.com"), ("role", "admin")]).await;
    assert_eq!(no.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(no.text().await.unwrap().contains("value=\"eve@example.com\""), "the form is kept");
    let bad = post(&app, &format!("{users}/invite"), &owner, &[("email", "not an address"), ("role", "viewer")]).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(app.state.store.run(|s| s.users().by_email("eve@example.com")).await.unwrap().is_none());
    for (path, form) in [(format!("{users}/{owner_id}/role"), vec![("role", "editor")]), (format!("{users}/{owner_id}/remove"), vec![])] {
        let kept = post(&app, &path, &owner, &form).await;
        assert_eq!(kept.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert!(kept.text().await.unwrap().contains("last owner"));
    }
    assert_eq!(post(&app, &format!("{users}/{ed_id}/role"), &owner, &[("role", "viewer")]).await.status(), StatusCode::SEE_OTHER);
    let grants = app.state.store.run(|s| s.users().list()).await.unwrap();
    let ed = grants.iter().find(|(u, _)| u.email == "ed@example.com").unwrap();
    assert_eq!(ed.1[0].role, SiteRole::Viewer);

    // Removed: the site is gone from their list; invited again, a known account gets no link.
    assert_eq!(post(&app, &format!("{users}/{ed_id}/remove"), &owner, &[]).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(get(&app, &format!("/console/sites/{}", s.id), Some(&editor.0)).await.status(), StatusCode::NOT_FOUND);
    let again = post(&app, &format!("{users}/invite"), &owner, &[("email", "ed@example.com"), ("role", "editor")]).await;
    assert_eq!(again.status(), StatusCode::OK);
    let page = again.text().await.unwrap();
    assert!(page.contains("has an account already") && !page.contains("id=\"setup-link\""), "{page}");
    let twice = post(&app, &format!("{users}/invite"), &owner, &[("email", "ed@example.com"), ("role", "viewer")]).await;
    assert_eq!(twice.status(), StatusCode::UNPROCESSABLE_ENTITY);

    let actions = audit_actions(&app);
    for a in ["user_invited", "role_granted", "role_revoked"] {
        assert!(actions.iter().any(|x| x == a), "{a} in {actions:?}");
    }
}

#[tokio::test]
async fn an_owner_cannot_act_on_another_site_and_viewers_and_editors_hand_made_posts_are_403() {
    let app = spawn_app_with(config()).await;
    let (mine, _) = app.create_site(Tier::Pro).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    let owner = signed_in(&app, "owner@example.com", grant(mine.id, SiteRole::Owner)).await;
    let viewer = signed_in(&app, "viewer@example.com", grant(mine.id, SiteRole::Viewer)).await;
    let editor = signed_in(&app, "editor@example.com", grant(mine.id, SiteRole::Editor)).await;
    let other_owner = signed_in(&app, "other@example.com", grant(other.id, SiteRole::Owner)).await;
    let viewer_id = app.state.store.run(|s| s.users().by_email("viewer@example.com")).await.unwrap().unwrap().id.to_string();

    let posts = |site: SiteId| {
        let base = format!("/console/sites/{site}");
        vec![
            (format!("{base}/settings/site"), vec![("name", "Taken"), ("lang", "en"), ("currency", "EUR"), ("answers", "extractive")]),
            (format!("{base}/settings/webhook"), vec![("url", "http://127.0.0.1:9/x"), ("events", "lead.captured")]),
            (format!("{base}/settings/webhook/test"), vec![]),
            (format!("{base}/settings/rotate-secret"), vec![]),
            (format!("{base}/settings/rotate-token"), vec![]),
            (format!("{base}/settings/disable"), vec![("confirm", "Test Site")]),
            (format!("{base}/settings/enable"), vec![]),
            (format!("{base}/settings/delete"), vec![("confirm", "Test Site")]),
            (format!("{base}/users/invite"), vec![("email", "mallory@example.com"), ("role", "owner")]),
            (format!("{base}/users/{viewer_id}/role"), vec![("role", "owner")]),
            (format!("{base}/users/{viewer_id}/remove"), vec![]),
        ]
    };
    for (who, cookie) in [("viewer", &viewer), ("editor", &editor)] {
        for page in ["settings", "users"] {
            assert_eq!(get(&app, &format!("/console/sites/{}/{page}", mine.id), Some(&cookie.0)).await.status(), StatusCode::FORBIDDEN, "{who} {page}");
        }
        for (path, form) in posts(mine.id) {
            assert_eq!(post(&app, &path, cookie, &form).await.status(), StatusCode::FORBIDDEN, "{who}: {path}");
        }
    }
    // Another site's owner: the same 404 as for a site that does not exist.
    for (path, form) in posts(mine.id) {
        assert_eq!(post(&app, &path, &other_owner, &form).await.status(), StatusCode::NOT_FOUND, "{path}");
    }
    // And a hand-made POST without the CSRF token is refused even for the owner.
    let forged = post_form(&app, &format!("/console/sites/{}/settings/site", mine.id), Some(&owner.0), Some(&app.base), &[("name", "Taken")]).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    // Nothing changed.
    let now = site(&app, mine.id).await.unwrap();
    assert_eq!((now.name.as_str(), now.enabled, now.webhook_url.is_none()), ("Test Site", true, true));
    assert!(app.state.store.run(|s| s.users().by_email("mallory@example.com")).await.unwrap().is_none());
    let grants = app.state.store.run(|s| s.users().list()).await.unwrap();
    assert_eq!(grants.iter().find(|(u, _)| u.email == "viewer@example.com").unwrap().1[0].role, SiteRole::Viewer);
}

/// The settings and users pages in Debian's headless Chromium (`tests/browser/settings.mjs`): the owner
/// saves the site, is told what is wrong with a bad language, sets the webhook to a real receiver and
/// sends a test event, gets a new secret, invites an editor and sees the link; the viewer has neither
/// page nor tab. axe-core on each; screenshots at 1280 and 375 px in `target/settings-screenshots/`.
#[tokio::test]
async fn the_settings_pages_work_in_a_real_browser() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let rx = Receiver::start().await;
    let mut config = config();
    config.limits.ip_per_minute = 100_000;
    let app = spawn_app_with(config).await;
    let (s, _) = app.create_site(Tier::Pro).await;
    let owner = app.url(&add_user(&app, "owner@example.com", grant(s.id, SiteRole::Owner)).await);
    let viewer = app.url(&add_user(&app, "viewer@example.com", grant(s.id, SiteRole::Viewer)).await);
    let shots = root.join("target/settings-screenshots");
    let env = [
        ("SITEBOT_URL", app.base.clone()),
        ("SITE_ID", s.id.to_string()),
        ("OWNER_LINK", owner),
        ("VIEWER_LINK", viewer),
        ("RECEIVER_URL", rx.url("/crm")),
        ("SCREENSHOT_DIR", shots.display().to_string()),
    ];
    crate::browser::run_browser_script("settings.mjs", &env, 4).await;
    for page in ["settings", "settings-error", "settings-test-event", "settings-secret", "users", "users-invited", "settings-viewer", "users-viewer"] {
        for size in ["desktop", "phone"] {
            assert!(shots.join(format!("{size}-{page}.png")).is_file(), "{size}-{page}.png kept");
        }
    }
    assert_eq!(rx.requests().iter().filter(|r| r.json()["type"] == "webhook.test").count(), 1, "the test event reached the receiver");
    let now = site(&app, s.id).await.unwrap();
    assert_eq!(now.name, "Praxis <Müller>");
    assert!(app.state.store.run(|s| s.users().by_email("ed@example.com")).await.unwrap().is_some());
}
