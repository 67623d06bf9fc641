//! Live hand-off over the real server: the conversation token, the 409 reasons, the visitor's event
//! stream (resumed with Last-Event-ID), the staff's console routes (one holder at a time), the wait
//! that runs out, the visitor's cancel, the webhook, the lead's transcript with the human turns (and the
//! console's transcript page and exports), an open inbox keeping the staff signed in, and a server killed
//! with SIGKILL mid-conversation.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use sitebot::domain::{ClosedDates, SiteId, SiteRole, Tier, TimeZone, WeeklyHours};
use sitebot::store::SiteUpdate;
use sitebot::store::users::Grant;

use crate::console::{PASSWORD, add_user, audit_actions, csrf_of, post_form, session_cookie};
use crate::helpers::{TestApp, new_site, problem, spawn_app, spawn_app_with, test_config, with_webhook};
use crate::knowledge::{ask, ask_as, clinic, import_files};
use crate::receiver::Receiver;

/// An SSE event as a client reads it: (id, event, data).
type Sse = (String, String, String);

/// Reads a live `text/event-stream` response event by event.
struct Stream {
    resp: reqwest::Response,
    buf: String,
}

impl Stream {
    fn new(resp: reqwest::Response) -> Stream {
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        Stream { resp, buf: String::new() }
    }

    /// The next event within `wait`, comments skipped; `None` when none came.
    async fn next(&mut self, wait: Duration) -> Option<Sse> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (String::new(), "message".to_owned(), Vec::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim_start().to_owned();
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim_start().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some((id, event, data.join("\n")));
            }
            let chunk = tokio::time::timeout_at(deadline, self.resp.chunk()).await.ok()?.ok()??;
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    async fn expect(&mut self, event: &str) -> (String, Value) {
        let (id, e, data) = self.next(Duration::from_secs(10)).await.unwrap_or_else(|| panic!("no `{event}` event within 10 s"));
        assert_eq!(e, event, "{data}");
        (id, serde_json::from_str(&data).unwrap())
    }
}

/// A site with hand-off on, open at every hour, and its knowledge.
async fn open_site(app: &TestApp) -> SiteId {
    let (site, _) = app.create_site(Tier::Pro).await;
    set(app, site.id, SiteUpdate { handoff: Some(true), ..Default::default() }).await;
    import_files(app, site.id, &clinic()).await;
    site.id
}

async fn set(app: &TestApp, site: SiteId, up: SiteUpdate) {
    app.state.store.run(move |s| s.site(site).update(up)).await.unwrap();
}

/// A new conversation: (id, token).
async fn converse(app: &TestApp, site: SiteId) -> (String, String) {
    let resp = ask(app, site, json!({"question": "When is the clinic open?"})).await;
    assert_eq!(resp.status(), 200);
    let a: Value = resp.json().await.unwrap();
    (a["conversationId"].as_str().unwrap().to_owned(), a["conversationToken"].as_str().expect("a new conversation's token").to_owned())
}

fn path(cid: &str, what: &str) -> String {
    format!("/v1/conversations/{cid}/{what}")
}

async fn visitor_post(app: &TestApp, site: SiteId, cid: &str, token: Option<&str>, what: &str, body: Option<Value>) -> reqwest::Response {
    let mut req = app.client.post(app.url(&path(cid, what))).header("X-Site-Id", site.to_string());
    if let Some(t) = token {
        req = req.header("X-Conversation-Token", t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    req.send().await.unwrap()
}

async fn events(app: &TestApp, site: SiteId, cid: &str, token: Option<&str>, last: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(app.url(&path(cid, "events"))).header("X-Site-Id", site.to_string());
    if let Some(t) = token {
        req = req.header("X-Conversation-Token", t);
    }
    if let Some(l) = last {
        req = req.header("Last-Event-ID", l);
    }
    req.send().await.unwrap()
}

/// A staff member with a password, signed in: (session cookie, CSRF token).
struct Staff {
    cookie: String,
    csrf: String,
}

async fn staff(app: &TestApp, email: &str, site: SiteId, role: SiteRole, name: &str) -> Staff {
    let link = add_user(app, email, Some(Grant { site_id: site, role })).await;
    let user = app.state.store.run({
        let email = email.to_owned();
        move |s| s.users().by_email(&email)
    });
    let id = user.await.unwrap().unwrap().id;
    let name = name.to_owned();
    app.state.store.run(move |s| s.users().set_display_name(&id, &name)).await.unwrap();
    let set = post_form(app, &link, None, Some(&app.base), &[("password", PASSWORD), ("repeat", PASSWORD)]).await;
    assert_eq!(set.status(), StatusCode::SEE_OTHER);
    let cookie = session_cookie(set.headers()).unwrap();
    let csrf = csrf_of(app, &cookie).await;
    Staff { cookie, csrf }
}

impl Staff {
    /// The console's inbox stream: while it is open, an owner or editor is online for the site.
    async fn online(&self, app: &TestApp, site: SiteId) -> Stream {
        let resp = app.client.get(app.url(&format!("/console/sites/{site}/inbox/events"))).header("Cookie", &self.cookie).send().await.unwrap();
        Stream::new(resp)
    }

    async fn act(&self, app: &TestApp, site: SiteId, cid: &str, action: &str, extra: &[(&str, &str)]) -> reqwest::Response {
        let mut form = vec![("csrf", self.csrf.as_str())];
        form.extend_from_slice(extra);
        post_form(app, &format!("/console/sites/{site}/inbox/{cid}/{action}"), Some(&self.cookie), Some(&app.base), &form).await
    }
}

/// A site with hand-off on, Ada of its staff (with `role`) online, and a visitor's new conversation with
/// its event stream open: where the tests of a visitor waiting for a person start.
struct Waiting {
    app: TestApp,
    site: SiteId,
    ada: Staff,
    /// Ada's inbox stream: she is online while it is open.
    online: Stream,
    cid: String,
    token: String,
    visitor: Stream,
}

async fn waiting_scene(role: SiteRole) -> Waiting {
    let app = spawn_app().await;
    let site = open_site(&app).await;
    let ada = staff(&app, "ada@example.com", site, role, "Ada").await;
    let online = ada.online(&app, site).await;
    let (cid, token) = converse(&app, site).await;
    let visitor = Stream::new(events(&app, site, &cid, Some(&token), None).await);
    Waiting { app, site, ada, online, cid, token, visitor }
}

#[tokio::test]
async fn a_conversation_is_reached_only_with_its_token_and_never_from_another_site() {
    let app = spawn_app().await;
    let site = open_site(&app).await;
    let (other, _) = app.create_site(Tier::Pro).await;
    let (cid, token) = converse(&app, site).await;
    assert!(token.starts_with("cvt_") && token.len() == 47, "{token}");
    // Only the first answer carries it; the stream's `done` of a new conversation does too.
    let follow: Value = ask_as(&app, site, json!({"question": "And on Saturdays?", "conversationId": cid}), &token).await.json().await.unwrap();
    assert!(follow.get("conversationToken").is_none(), "{follow}");
    let streamed = app
        .client
        .post(app.url("/v1/query/stream"))
        .header("X-Site-Id", site.to_string())
        .json(&json!({"question": "Where can I park?"}))
        .send()
        .await
        .unwrap();
    let done = crate::stream::parse_sse(&streamed.text().await.unwrap()).pop().unwrap();
    assert_eq!(done.0, "done");
    assert!(serde_json::from_str::<Value>(&done.1).unwrap()["conversationToken"].as_str().unwrap().starts_with("cvt_"));
    // Stored as its SHA-256 only.
    let stored: Vec<u8> = app.db().query_row("SELECT token_hash FROM conversations WHERE id = ?1", [&cid], |r| r.get(0)).unwrap();
    assert_eq!(stored, sitebot::secrets::token_hash(&token).to_vec());

    // Without the token, with a wrong one, another site's, a malformed id: the same 404.
    for resp in [
        events(&app, site, &cid, None, None).await,
        events(&app, site, &cid, Some("cvt_wrong"), None).await,
        events(&app, site, &cid, Some(&token[..46]), None).await,
        events(&app, other.id, &cid, Some(&token), None).await,
        events(&app, site, "cnv_nope", Some(&token), None).await,
        visitor_post(&app, site, &cid, None, "handoff", None).await,
        visitor_post(&app, other.id, &cid, Some(&token), "handoff", None).await,
        visitor_post(&app, site, &cid, Some("cvt_wrong"), "messages", Some(json!({"text": "hi"}))).await,
    ] {
        problem(resp, 404, "conversation_not_found").await;
    }
    // With it: the stream opens (nothing has happened yet).
    let mut s = Stream::new(events(&app, site, &cid, Some(&token), None).await);
    assert!(s.next(Duration::from_millis(300)).await.is_none());
    // Messages need a person involved; a bad Last-Event-ID is a clear 422.
    problem(visitor_post(&app, site, &cid, Some(&token), "messages", Some(json!({"text": "hello?"}))).await, 409, "handoff_inactive").await;
    let bad = problem(events(&app, site, &cid, Some(&token), Some("seven")).await, 422, "validation_failed").await;
    assert_eq!(bad["errors"][0]["field"], "Last-Event-ID");
}

/// One session holds at most `MAX_STREAMS_PER_SESSION` live inbox streams at once: the next is a
/// readable 429 page, while another person's session still opens theirs.
#[tokio::test]
async fn a_session_holds_a_bounded_number_of_inbox_streams() {
    use sitebot::console::inbox::MAX_STREAMS_PER_SESSION;
    let app = spawn_app().await;
    let site = open_site(&app).await;
    let ada = staff(&app, "ada@example.com", site, SiteRole::Editor, "Ada").await;
    let mut open = Vec::new();
    for _ in 0..MAX_STREAMS_PER_SESSION {
        let resp = app.client.get(app.url(&format!("/console/sites/{site}/inbox/events"))).header("Cookie", &ada.cookie).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        open.push(resp);
    }
    let refused = app.client.get(app.url(&format!("/console/sites/{site}/inbox/events"))).header("Cookie", &ada.cookie).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(refused.text().await.unwrap().contains("Close another tab with the inbox"));
    let bob = staff(&app, "bob@example.com", site, SiteRole::Editor, "Bob").await;
    let theirs = app.client.get(app.url(&format!("/console/sites/{site}/inbox/events"))).header("Cookie", &bob.cookie).send().await.unwrap();
    assert_eq!(theirs.status(), StatusCode::OK, "another session is not affected");
    drop(open);
}

#[tokio::test]
async fn off_closed_and_nobody_online_are_the_reasons_a_person_cannot_come() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    import_files(&app, site.id, &clinic()).await;
    let site = site.id;
    let (cid, token) = converse(&app, site).await;
    let reason = |resp| async { problem(resp, 409, "handoff_unavailable").await["reason"].as_str().unwrap().to_owned() };
    assert_eq!(reason(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await).await, "off");

    // On, but closed today in the site's zone (a closed date), then outside its hours.
    let today = chrono::Utc::now().with_timezone(&chrono_tz::Pacific::Kiritimati).date_naive().format("%Y-%m-%d").to_string();
    set(
        &app,
        site,
        SiteUpdate {
            handoff: Some(true),
            handoff_timezone: Some(TimeZone::parse("Pacific/Kiritimati").unwrap()),
            handoff_closed: Some(ClosedDates::parse(&today).unwrap()),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(reason(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await).await, "closed");
    let now = chrono::Utc::now().with_timezone(&chrono_tz::Pacific::Kiritimati);
    let not_now = format!("Mon-Sun {}", if chrono::Timelike::hour(&now) < 12 { "13:00-24:00" } else { "00:00-11:00" });
    set(
        &app,
        site,
        SiteUpdate { handoff_closed: Some(ClosedDates::default()), handoff_hours: Some(WeeklyHours::parse(&not_now).unwrap()), ..Default::default() },
    )
    .await;
    assert_eq!(reason(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await).await, "closed");

    // Open at every hour: nobody online; a viewer with the inbox open does not count.
    set(&app, site, SiteUpdate { handoff_hours: Some(WeeklyHours::default()), ..Default::default() }).await;
    assert_eq!(reason(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await).await, "nobody_online");
    let viewer = staff(&app, "viewer@example.com", site, SiteRole::Viewer, "Vic").await;
    let mut watching = viewer.online(&app, site).await;
    let (_, inbox) = watching.expect("inbox").await;
    assert_eq!(inbox["online"], 0);
    assert_eq!(reason(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await).await, "nobody_online");
    // An editor's inbox open: a person can come. Its stream gone (the page reloading), the editor is still
    // online for the grace; past it, nobody is.
    let editor = staff(&app, "editor@example.com", site, SiteRole::Editor, "Eddie").await;
    let inbox_stream = editor.online(&app, site).await;
    drop(inbox_stream);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (reloading, reloading_token) = converse(&app, site).await;
    let resp = visitor_post(&app, site, &reloading, Some(&reloading_token), "handoff", None).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED, "a reload of the inbox is not leaving");
    let resp = visitor_post(&app, site, &reloading, Some(&reloading_token), "handoff/cancel", None).await;
    assert!(resp.status().is_success(), "{}", resp.status());
    tokio::time::sleep(sitebot::live::PRESENCE_GRACE + Duration::from_millis(300)).await;
    assert_eq!(reason(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await).await, "nobody_online", "the tab closed");
    let _open = editor.online(&app, site).await;
    let resp = visitor_post(&app, site, &cid, Some(&token), "handoff", None).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let body: Value = resp.json().await.unwrap();
    assert_eq!((body["state"].as_str(), body["conversationId"].as_str()), (Some("waiting"), Some(cid.as_str())));
    assert!(body["waitUntil"].is_string());
    // The viewer's inbox hears of it (after the editor's comings and goings).
    let mut inbox = watching.expect("inbox").await.1;
    for _ in 0..10 {
        if inbox["conversations"].as_array().unwrap().iter().any(|c| c["conversationId"] == cid.as_str()) {
            break;
        }
        inbox = watching.expect("inbox").await.1;
    }
    assert_eq!(inbox["conversations"].as_array().unwrap().len(), 1, "the cancelled one is not listed: {inbox}");
    assert_eq!(inbox["conversations"][0]["state"], "waiting", "{inbox}");
    assert_eq!(inbox["conversations"][0]["conversationId"], cid.as_str());
    // Signed out, the editor is no longer online, though the stream's connection was still open.
    let out = post_form(&app, "/console/logout", Some(&editor.cookie), Some(&app.base), &[("csrf", editor.csrf.as_str())]).await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (cid2, token2) = converse(&app, site).await;
    assert_eq!(reason(visitor_post(&app, site, &cid2, Some(&token2), "handoff", None).await).await, "nobody_online", "signed out");
}

#[tokio::test]
async fn a_person_takes_over_replies_and_hands_back_and_everything_said_reaches_the_lead_and_the_webhook() {
    let rx = Receiver::start().await;
    let app = spawn_app_with(crate::webhooks::webhook_config()).await;
    let mut new = with_webhook(new_site(Tier::Pro), &rx.url("/hook"));
    new.webhook_events = vec![sitebot::domain::EventType::LeadCaptured, sitebot::domain::EventType::HandoffRequested];
    let (site, _) = app.create_site_with(new).await;
    set(&app, site.id, SiteUpdate { handoff: Some(true), ..Default::default() }).await;
    import_files(&app, site.id, &clinic()).await;
    let site = site.id;
    let ada = staff(&app, "ada@example.com", site, SiteRole::Editor, "Ada").await;
    let _online = ada.online(&app, site).await;
    let (cid, token) = converse(&app, site).await;
    let mut visitor = Stream::new(events(&app, site, &cid, Some(&token), None).await);

    assert_eq!(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await.status(), StatusCode::ACCEPTED);
    let (_, waiting) = visitor.expect("state").await;
    assert_eq!(waiting["state"], "waiting");
    // Asking twice changes nothing; the assistant does not answer while a person is awaited.
    assert_eq!(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await.status(), StatusCode::ACCEPTED);
    problem(ask_as(&app, site, json!({"question": "Anyone there?", "conversationId": cid}), &token).await, 409, "handoff_active").await;
    let hostile = "<img src=x onerror=alert(1)> still there?";
    assert_eq!(visitor_post(&app, site, &cid, Some(&token), "messages", Some(json!({"text": hostile}))).await.status(), StatusCode::ACCEPTED);
    let (_, mine) = visitor.expect("message").await;
    assert_eq!((mine["role"].as_str(), mine["text"].as_str()), (Some("user"), Some(hostile)));

    // The staff's side: the inbox lists it with the transcript so far.
    let inbox = app.state.store.run(move |s| s.site(site).handoff().inbox()).await.unwrap();
    assert_eq!(inbox.len(), 1);
    let said: Vec<&str> = inbox[0].transcript.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(said.first(), Some(&"When is the clinic open?"));
    assert_eq!(said.last(), Some(&hostile));

    // The inbox page shows it with the visitor's text escaped, and what Ada may do.
    let page = crate::console::get(&app, &format!("/console/sites/{site}/inbox"), Some(&ada.cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains(&cid) && html.contains("img src=x onerror=alert(1)") && !html.contains("<img src=x"), "shown as text: {html}");
    assert!(html.contains(&format!("/inbox/{cid}/take")) && html.contains("/console/assets/inbox.js"));
    let script = crate::console::get(&app, "/console/assets/inbox.js", None).await;
    assert_eq!((script.status(), script.headers()["content-type"].to_str().unwrap()), (StatusCode::OK, "text/javascript; charset=utf-8"));

    assert_eq!(ada.act(&app, site, &cid, "take", &[]).await.status(), StatusCode::SEE_OTHER);
    let (_, joined) = visitor.expect("state").await;
    assert_eq!((joined["state"].as_str(), joined["displayName"].as_str()), (Some("joined"), Some("Ada")));
    // Replies reach the visitor's stream; the latency is printed, not asserted.
    let mut took = Vec::new();
    for i in 0..5 {
        let sent = Instant::now();
        assert_eq!(ada.act(&app, site, &cid, "reply", &[("text", &format!("Reply {i}"))]).await.status(), StatusCode::SEE_OTHER);
        let (_, m) = visitor.expect("message").await;
        took.push(sent.elapsed());
        assert_eq!((m["role"].as_str(), m["displayName"].as_str(), m["text"].as_str()), (Some("staff"), Some("Ada"), Some(format!("Reply {i}").as_str())));
    }
    took.sort();
    println!("staff reply to visitor stream over loopback (console POST included): median {:?}, max {:?}", took[2], took[4]);
    assert_eq!(visitor_post(&app, site, &cid, Some(&token), "messages", Some(json!({"text": "Thanks, Ada"}))).await.status(), StatusCode::ACCEPTED);
    visitor.expect("message").await;

    assert_eq!(ada.act(&app, site, &cid, "hand-back", &[]).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(visitor.expect("state").await.1["state"], "handed_back");
    assert_eq!(ask_as(&app, site, json!({"question": "And on Saturdays?", "conversationId": cid}), &token).await.status(), 200, "the assistant answers again");
    problem(visitor_post(&app, site, &cid, Some(&token), "messages", Some(json!({"text": "hello?"}))).await, 409, "handoff_inactive").await;

    // The lead carries the whole transcript, the human turns with the person's name.
    let lead = crate::leads::post_lead_as(&app, &site, &json!({"email": "visitor@example.com", "conversationId": cid}), &token).await;
    assert_eq!(lead.status(), 202);
    app.deliver_until(|| rx.requests().len() >= 2).await;
    let got = rx.requests();
    let requested = got.iter().find(|r| r.json()["type"] == "conversation.handoff_requested").expect("conversation.handoff_requested");
    assert_eq!(requested.json()["data"]["conversationId"], cid.as_str());
    assert_eq!(requested.json()["data"]["transcript"][0]["role"], "user");
    let captured = got.iter().find(|r| r.json()["type"] == "lead.captured").expect("lead.captured").json();
    let transcript = captured["data"]["transcript"].as_array().unwrap().clone();
    let roles: Vec<&str> = transcript.iter().map(|t| t["role"].as_str().unwrap()).collect();
    assert!(roles.contains(&"assistant") && roles.contains(&"staff"), "{roles:?}");
    assert_eq!(transcript.iter().filter(|t| t["role"] == "staff").count(), 5);
    assert!(transcript.iter().filter(|t| t["role"] == "staff").all(|t| t["author"] == "Ada"));
    assert!(transcript.iter().any(|t| t["text"] == hostile) && transcript.iter().any(|t| t["text"] == "Thanks, Ada"));
    let ats: Vec<&str> = transcript.iter().map(|t| t["at"].as_str().unwrap()).collect();
    assert!(ats.windows(2).all(|w| w[0] <= w[1]), "oldest first: {ats:?}");
}

#[tokio::test]
async fn two_staff_members_cannot_both_hold_a_conversation() {
    let app = spawn_app().await;
    let site = open_site(&app).await;
    let ada = staff(&app, "ada@example.com", site, SiteRole::Editor, "Ada").await;
    let bo = staff(&app, "bo@example.com", site, SiteRole::Owner, "Bo").await;
    let vic = staff(&app, "vic@example.com", site, SiteRole::Viewer, "Vic").await;
    let _online = ada.online(&app, site).await;
    for round in 0..5 {
        let (cid, token) = converse(&app, site).await;
        assert_eq!(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await.status(), StatusCode::ACCEPTED);
        let (a, b) = tokio::join!(ada.act(&app, site, &cid, "take", &[]), bo.act(&app, site, &cid, "take", &[]));
        let mut statuses = [a.status().as_u16(), b.status().as_u16()];
        statuses.sort();
        assert_eq!(statuses, [303, 409], "round {round}: exactly one takes it");
        let holder: String = app.db().query_row("SELECT holder FROM conversations WHERE id = ?1", [&cid], |r| r.get(0)).unwrap();
        let joined = app.count("SELECT count(*) FROM conversation_events WHERE conversation_id = ?1 AND state = 'joined'", [&cid]);
        assert_eq!(joined, 1, "one joined event");
        assert!(holder.starts_with("usr_"));
    }
    // Taking over is explicit; the one who lost it can no longer reply; viewers may not act.
    let (cid, token) = converse(&app, site).await;
    let mut visitor = Stream::new(events(&app, site, &cid, Some(&token), None).await);
    visitor_post(&app, site, &cid, Some(&token), "handoff", None).await;
    assert_eq!(ada.act(&app, site, &cid, "take", &[]).await.status(), StatusCode::SEE_OTHER);
    let refused = bo.act(&app, site, &cid, "take", &[]).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    assert!(refused.text().await.unwrap().contains("Ada"), "says who holds it");
    assert_eq!(bo.act(&app, site, &cid, "reply", &[("text", "me too")]).await.status(), StatusCode::CONFLICT);
    assert_eq!(bo.act(&app, site, &cid, "take", &[("over", "1")]).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(ada.act(&app, site, &cid, "reply", &[("text", "still me?")]).await.status(), StatusCode::CONFLICT);
    assert_eq!(vic.act(&app, site, &cid, "take", &[("over", "1")]).await.status(), StatusCode::FORBIDDEN);
    assert_eq!(vic.act(&app, site, &cid, "close", &[]).await.status(), StatusCode::FORBIDDEN);
    let page = crate::console::get(&app, &format!("/console/sites/{site}/inbox"), Some(&vic.cookie)).await.text().await.unwrap();
    assert!(page.contains(&cid) && !page.contains("/take\"") && !page.contains("/reply\""), "a viewer reads, with no controls");
    let seen: Vec<(String, Option<String>)> = {
        let mut out = Vec::new();
        for _ in 0..3 {
            let (_, v) = visitor.expect("state").await;
            out.push((v["state"].as_str().unwrap().to_owned(), v["displayName"].as_str().map(str::to_owned)));
        }
        out
    };
    assert_eq!(seen, vec![("waiting".into(), None), ("joined".into(), Some("Ada".into())), ("joined".into(), Some("Bo".into()))]);
    assert!(visitor.next(Duration::from_millis(300)).await.is_none(), "the refused actions told the visitor nothing");
    assert_eq!(bo.act(&app, site, &cid, "close", &[]).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(visitor.expect("state").await.1["state"], "closed");
    assert_eq!(bo.act(&app, site, &cid, "close", &[]).await.status(), StatusCode::CONFLICT, "nothing left to close");
}

#[tokio::test]
async fn a_dropped_stream_resumed_with_last_event_id_misses_and_repeats_nothing() {
    let app = spawn_app().await;
    let site = open_site(&app).await;
    let ada = staff(&app, "ada@example.com", site, SiteRole::Editor, "Ada").await;
    let _online = ada.online(&app, site).await;
    let (cid, token) = converse(&app, site).await;
    visitor_post(&app, site, &cid, Some(&token), "handoff", None).await;
    ada.act(&app, site, &cid, "take", &[]).await;
    let mut sent = vec!["waiting".to_owned(), "joined".to_owned()];
    for i in 0..6 {
        let text = format!("line {i}");
        if i % 2 == 0 {
            ada.act(&app, site, &cid, "reply", &[("text", &text)]).await;
        } else {
            visitor_post(&app, site, &cid, Some(&token), "messages", Some(json!({"text": text}))).await;
        }
        sent.push(text);
    }
    let label = |e: &Sse| {
        let v: Value = serde_json::from_str(&e.2).unwrap();
        v["text"].as_str().or(v["state"].as_str()).unwrap().to_owned()
    };
    // Read four events, drop the connection, say more while nobody listens, resume.
    let mut first = Stream::new(events(&app, site, &cid, Some(&token), None).await);
    let mut seen: Vec<Sse> = Vec::new();
    for _ in 0..4 {
        seen.push(first.next(Duration::from_secs(5)).await.unwrap());
    }
    drop(first);
    for i in 6..9 {
        let text = format!("line {i}");
        ada.act(&app, site, &cid, "reply", &[("text", &text)]).await;
        sent.push(text);
    }
    let last = seen.last().unwrap().0.clone();
    let mut resumed = Stream::new(events(&app, site, &cid, Some(&token), Some(&last)).await);
    while let Some(e) = resumed.next(Duration::from_millis(500)).await {
        seen.push(e);
    }
    // While the stream is open, new events arrive on it too.
    ada.act(&app, site, &cid, "reply", &[("text", "live")]).await;
    sent.push("live".into());
    seen.push(resumed.next(Duration::from_secs(5)).await.unwrap());
    assert_eq!(seen.iter().map(label).collect::<Vec<_>>(), sent, "every event once, in order");
    let ids: Vec<i64> = seen.iter().map(|e| e.0.parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    // The query parameter resumes the same way (EventSource cannot set headers).
    let third = &seen[2].0;
    let url = format!("{}?lastEventId={third}", app.url(&path(&cid, "events")));
    let resp = app.client.get(url).header("X-Site-Id", site.to_string()).header("X-Conversation-Token", &token).send().await.unwrap();
    let mut by_query = Stream::new(resp);
    assert_eq!(by_query.next(Duration::from_secs(5)).await.unwrap().0, seen[3].0);
}

#[tokio::test]
async fn nobody_joining_within_the_wait_is_missed_and_the_lead_carries_what_was_said() {
    let Waiting { app, site, ada, online: _online, cid, token, mut visitor } = waiting_scene(SiteRole::Owner).await;
    set(&app, site, SiteUpdate { handoff_wait_secs: Some(1), ..Default::default() }).await;
    let requested = Instant::now();
    assert_eq!(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await.status(), StatusCode::ACCEPTED);
    visitor.expect("state").await;
    assert_eq!(
        visitor_post(&app, site, &cid, Some(&token), "messages", Some(json!({"text": "My tooth hurts, please call me"}))).await.status(),
        StatusCode::ACCEPTED
    );
    visitor.expect("message").await;
    let (_, missed) = visitor.expect("state").await;
    assert_eq!(missed["state"], "missed");
    println!("a 1 s wait ended with `missed` after {:?}", requested.elapsed());
    // Back to the assistant; the contact form's lead carries the question, the answer and the message.
    assert_eq!(ask_as(&app, site, json!({"question": "And on Saturdays?", "conversationId": cid}), &token).await.status(), 200);
    assert_eq!(ada.act(&app, site, &cid, "take", &[]).await.status(), StatusCode::CONFLICT, "too late to take");
    let lead = crate::leads::post_lead_as(&app, &site, &json!({"email": "v@example.com", "conversationId": cid}), &token).await;
    assert_eq!(lead.status(), 202);
    let id = lead.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
    let lead = app.state.store.run(move |s| s.site(site).leads().get(&id)).await.unwrap();
    let texts: Vec<String> = lead.lead.transcript.unwrap().into_iter().map(|t| t.text).collect();
    assert_eq!(texts.first().map(String::as_str), Some("When is the clinic open?"));
    assert!(texts.contains(&"My tooth hurts, please call me".to_owned()), "{texts:?}");
}

#[tokio::test]
async fn a_change_made_by_another_process_reaches_the_open_stream() {
    // Streams read the store when a bell of their server rings; a change written through another
    // connection to the same database (another process: a second expiry, a command) rings none, and
    // reaches the stream through the server's watch, every few seconds.
    let Waiting { app, site, online: _online, cid, token, mut visitor, .. } = waiting_scene(SiteRole::Owner).await;
    assert_eq!(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await.status(), StatusCode::ACCEPTED);
    let (_, waiting) = visitor.expect("state").await;
    assert_eq!(waiting["state"], "waiting");
    let elsewhere = sitebot::store::Store::open(app.state.store.path(), sitebot::secrets::Keyring::from_bytes(&[9; 32])).unwrap();
    let an_hour_on = sitebot::domain::Timestamp::from_millis(sitebot::domain::Timestamp::now().as_millis() + 3_600_000);
    let written = Instant::now();
    let missed = elsewhere.handoff_expiry().expire_due(an_hour_on).unwrap();
    assert_eq!(missed.len(), 1, "the wait ended in the other process");
    let (id, event) = visitor.expect("state").await;
    assert_eq!(event["state"], "missed");
    assert_eq!(id, missed[0].event.id.to_string());
    println!("a change written by another connection reached the stream after {:?}", written.elapsed());
    assert!(visitor.next(Duration::from_millis(300)).await.is_none(), "and only once");
}

#[tokio::test]
async fn the_visitor_cancels_the_wait_and_the_assistant_answers_again() {
    let Waiting { app, site, ada, online: _online, cid, token, mut visitor } = waiting_scene(SiteRole::Editor).await;
    problem(visitor_post(&app, site, &cid, Some(&token), "handoff/cancel", None).await, 409, "handoff_inactive").await;
    assert_eq!(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await.status(), StatusCode::ACCEPTED);
    assert_eq!(visitor.expect("state").await.1["state"], "waiting");
    problem(visitor_post(&app, site, &cid, None, "handoff/cancel", None).await, 404, "conversation_not_found").await;
    problem(visitor_post(&app, site, &cid, Some("cvt_not-the-token"), "handoff/cancel", None).await, 404, "conversation_not_found").await;
    let cancelled = visitor_post(&app, site, &cid, Some(&token), "handoff/cancel", None).await;
    assert_eq!(cancelled.status(), StatusCode::ACCEPTED);
    let body: Value = cancelled.json().await.unwrap();
    assert_eq!(body["state"], "closed");
    let (id, closed) = visitor.expect("state").await;
    assert_eq!((closed["state"].as_str(), id.as_str()), (Some("closed"), body["eventId"].as_str().unwrap()));
    assert!(app.state.store.run(move |s| s.site(site).handoff().inbox()).await.unwrap().is_empty(), "no longer in the inbox");
    assert_eq!(ask_as(&app, site, json!({"question": "And on Saturdays?", "conversationId": cid}), &token).await.status(), 200, "the assistant answers again");
    assert_eq!(ada.act(&app, site, &cid, "take", &[]).await.status(), StatusCode::CONFLICT, "nothing to take");
}

#[tokio::test]
async fn what_a_person_said_is_in_the_transcript_page_and_the_exports() {
    let app = spawn_app().await;
    let site = open_site(&app).await;
    let ada = staff(&app, "ada@example.com", site, SiteRole::Owner, "Ada").await;
    let _online = ada.online(&app, site).await;
    let (cid, token) = converse(&app, site).await;
    let (quiet, _) = converse(&app, site).await;
    assert_eq!(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await.status(), StatusCode::ACCEPTED);
    assert_eq!(ada.act(&app, site, &cid, "take", &[]).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(ada.act(&app, site, &cid, "reply", &[("text", "Ada here: <b>we open at 8</b>")]).await.status(), StatusCode::SEE_OTHER);
    let sent = visitor_post(&app, site, &cid, Some(&token), "messages", Some(json!({"text": "Thank you, Ada"}))).await;
    assert_eq!(sent.status(), StatusCode::ACCEPTED);
    assert_eq!(ada.act(&app, site, &cid, "close", &[]).await.status(), StatusCode::SEE_OTHER);

    let page = crate::console::get(&app, &format!("/console/sites/{site}/conversations/{cid}"), Some(&ada.cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("When is the clinic open?"), "the question");
    let shown = html.contains("Ada here: &#60;b&#62;we open at 8&#60;/b&#62;") || html.contains("Ada here: &lt;b&gt;we open at 8&lt;/b&gt;");
    assert!(shown && !html.contains("<b>we open"), "the person's reply, as text: {html}");
    assert!(html.contains("Thank you, Ada"), "the visitor's message to the person");

    let csv = crate::console::get(&app, &format!("/console/sites/{site}/conversations.csv"), Some(&ada.cookie)).await.text().await.unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = header.iter().position(|h| h == "personMessages").expect("a personMessages column");
    let count = |id: &str| {
        csv::Reader::from_reader(csv.as_bytes()).records().map(Result::unwrap).find(|r| &r[0] == id).map(|r| r[col].to_owned()).expect("the conversation's row")
    };
    assert_eq!((count(&cid).as_str(), count(&quiet).as_str()), ("2", "0"), "{csv}");
    let transcript_col = header.iter().position(|h| h == "transcript").expect("a transcript column");
    let transcript = csv::Reader::from_reader(csv.as_bytes()).records().map(Result::unwrap).find(|r| r[0] == cid).unwrap()[transcript_col].to_owned();
    let lines: Vec<&str> = transcript.lines().collect();
    assert_eq!(lines.first().copied(), Some("visitor: When is the clinic open?"), "{transcript}");
    assert!(lines.contains(&"staff (Ada): Ada here: <b>we open at 8</b>") && lines.contains(&"visitor: Thank you, Ada"), "{transcript}");
    let jsonl = crate::console::get(&app, &format!("/console/sites/{site}/conversations.jsonl"), Some(&ada.cookie)).await.text().await.unwrap();
    let row: Value = jsonl.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|r| r["conversationId"] == cid.as_str()).unwrap();
    assert_eq!(row["personMessages"], 2, "{row}");
    let said: Vec<(&str, &str)> = row["transcript"].as_array().unwrap().iter().map(|t| (t["role"].as_str().unwrap(), t["text"].as_str().unwrap())).collect();
    assert!(said.contains(&("staff", "Ada here: <b>we open at 8</b>")) && said.contains(&("user", "Thank you, Ada")), "{row}");
    let ada_said = row["transcript"].as_array().unwrap().iter().find(|t| t["role"] == "staff").unwrap();
    assert_eq!(ada_said["author"], "Ada", "{row}");
}

#[tokio::test]
async fn an_open_inbox_keeps_the_staff_session_from_idling_out() {
    let app = spawn_app().await;
    let site = open_site(&app).await;
    let ada = staff(&app, "ada@example.com", site, SiteRole::Editor, "Ada").await;
    let bob = staff(&app, "bob@example.com", site, SiteRole::Editor, "Bob").await;
    let mut online = ada.online(&app, site).await;
    online.expect("inbox").await;
    // Both have been idle for 29½ minutes (the idle limit is 30); only Ada has the inbox open.
    let idle_since = sitebot::domain::Timestamp::now().as_millis() - 29 * 60_000 - 30_000;
    app.db().execute("UPDATE console_sessions SET last_seen_at = ?1", [idle_since]).unwrap();
    // Something happens in the inbox: Ada's stream reads it, and that is her activity.
    let (cid, token) = converse(&app, site).await;
    assert_eq!(visitor_post(&app, site, &cid, Some(&token), "handoff", None).await.status(), StatusCode::ACCEPTED);
    let (_, inbox) = online.expect("inbox").await;
    assert_eq!(inbox["conversations"][0]["conversationId"], cid.as_str());
    let seen: Vec<i64> = {
        let db = app.db();
        let mut stmt = db.prepare("SELECT s.last_seen_at FROM console_sessions s JOIN console_users u ON u.id = s.user_id ORDER BY u.email").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let now = sitebot::domain::Timestamp::now().as_millis();
    assert!(now - seen[0] < 60_000, "Ada's idle clock started again: {}", now - seen[0]);
    assert_eq!(seen[1], idle_since, "Bob's did not: he has no inbox open");
    // A minute later, past the idle limit for Bob, Ada can still act; Bob has to sign in again.
    app.db().execute("UPDATE console_sessions SET last_seen_at = last_seen_at - 60000", []).unwrap();
    let location = |r: &reqwest::Response| r.headers().get("location").map(|l| l.to_str().unwrap().to_owned()).unwrap_or_default();
    let took = ada.act(&app, site, &cid, "take", &[]).await;
    assert_eq!((took.status(), location(&took)), (StatusCode::SEE_OTHER, format!("/console/sites/{site}/inbox#{cid}")), "Ada is still signed in and took it");
    let refused = bob.act(&app, site, &cid, "take", &[("over", "1")]).await;
    assert_eq!((refused.status(), location(&refused)), (StatusCode::SEE_OTHER, format!("/console/login?site={site}")), "Bob's session idled out");
}

#[tokio::test]
async fn owners_set_hand_off_in_the_console_and_editors_cannot() {
    let app = spawn_app().await;
    let (site, _) = app.create_site(Tier::Pro).await;
    let site = site.id;
    let owner = staff(&app, "owner@example.com", site, SiteRole::Owner, "Olga").await;
    let editor = staff(&app, "ed@example.com", site, SiteRole::Editor, "Ed").await;
    let path = format!("/console/sites/{site}/settings");
    let page = crate::console::get(&app, &path, Some(&owner.cookie)).await;
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains("name=\"hours\"") && html.contains("value=\"UTC\"") && html.contains("value=\"120\""), "the site's values: {html}");
    assert_eq!(crate::console::get(&app, &path, Some(&editor.cookie)).await.status(), StatusCode::FORBIDDEN, "editors do not see the settings");
    async fn post(app: &TestApp, path: &str, who: &Staff, csrf: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        let mut form = vec![("csrf", csrf)];
        form.extend_from_slice(fields);
        post_form(app, path, Some(&who.cookie), Some(&app.base), &form).await
    }
    let good = [
        ("enabled", "on"),
        ("hours", "Mon-Fri 09:00-17:00; Sat 10:00-14:00"),
        ("closed", "2026-12-24,2026-12-25"),
        ("timezone", "Europe/Berlin"),
        ("wait", "90"),
    ];
    assert_eq!(post(&app, &path, &owner, "not-the-token", &good[..]).await.status(), StatusCode::FORBIDDEN, "a post without the session's CSRF token");
    assert_eq!(post(&app, &path, &editor, &editor.csrf, &good[..]).await.status(), StatusCode::FORBIDDEN, "editors may not change them");
    let bad =
        post(&app, &path, &owner, &owner.csrf, &[("enabled", "on"), ("hours", "Mon-Fri 9-17"), ("closed", ""), ("timezone", "Europe/Berlin"), ("wait", "90")])
            .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = bad.text().await.unwrap();
    assert!(html.contains("Opening hours:") && html.contains("value=\"Mon-Fri 9-17\""), "says what is wrong, keeps what was typed: {html}");
    let unchanged = app.state.store.run(move |s| s.site(site).get()).await.unwrap().unwrap();
    assert!(!unchanged.handoff.enabled, "nothing saved");

    let saved = post(&app, &path, &owner, &owner.csrf, &good[..]).await;
    assert_eq!((saved.status(), saved.headers()["location"].to_str().unwrap()), (StatusCode::SEE_OTHER, format!("{path}?saved=1").as_str()));
    let s = app.state.store.run(move |s| s.site(site).get()).await.unwrap().unwrap();
    assert!(s.handoff.enabled);
    assert_eq!(
        (s.handoff.hours.weekly.to_string(), s.handoff.hours.closed.to_string(), s.handoff.hours.zone.to_string(), s.handoff.wait_secs),
        (
            "Mon 09:00-17:00; Tue 09:00-17:00; Wed 09:00-17:00; Thu 09:00-17:00; Fri 09:00-17:00; Sat 10:00-14:00".to_owned(),
            "2026-12-24,2026-12-25".to_owned(),
            "Europe/Berlin".to_owned(),
            90
        )
    );
    assert!(audit_actions(&app).iter().any(|a| a == "handoff_settings_changed"), "audited");
    let html = crate::console::get(&app, &format!("{path}?saved=1"), Some(&owner.cookie)).await.text().await.unwrap();
    assert!(html.contains("Saved.") && html.contains("value=\"Europe/Berlin\"") && html.contains("checked"), "{html}");
    // Off again: the checkbox not sent.
    let off = post(&app, &path, &owner, &owner.csrf, &good[1..]).await;
    assert_eq!(off.status(), StatusCode::SEE_OTHER);
    assert!(!app.state.store.run(move |s| s.site(site).get()).await.unwrap().unwrap().handoff.enabled);
}

#[tokio::test]
async fn hand_off_is_counted_in_the_metrics() {
    let mut config = test_config();
    config.server.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    let app = spawn_app_with(config).await;
    let site = open_site(&app).await;
    let (cid, token) = converse(&app, site).await;
    visitor_post(&app, site, &cid, Some(&token), "handoff", None).await;
    let ada = staff(&app, "ada@example.com", site, SiteRole::Editor, "Ada").await;
    let _online = ada.online(&app, site).await;
    visitor_post(&app, site, &cid, Some(&token), "handoff", None).await;
    ada.act(&app, site, &cid, "take", &[]).await;
    ada.act(&app, site, &cid, "reply", &[("text", "Hello")]).await;
    let text = app.state.metrics.encode(&[], 0, Default::default(), None);
    for line in [
        "sitebot_handoffs_total{event=\"unavailable\",reason=\"nobody_online\"} 1",
        "sitebot_handoffs_total{event=\"requested\"} 1",
        "sitebot_handoffs_total{event=\"taken\"} 1",
        "sitebot_handoff_seconds_count{stage=\"first_reply\"} 1",
    ] {
        assert!(text.contains(line), "missing {line}");
    }
}

/// The built binary, run as an operator would, on `dir`.
fn sitebot(dir: &std::path::Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_sitebot"));
    cmd.arg("--data-dir").arg(dir).env("SITEBOT_LOG__LEVEL", "warn").kill_on_drop(true);
    cmd
}

async fn cli(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    sitebot(dir).args(args).output().await.unwrap()
}

async fn serve(dir: &std::path::Path) -> (tokio::process::Child, String) {
    crate::served::serve_on_free_port(sitebot(dir)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_server_killed_mid_conversation_loses_nothing_either_side_was_told_was_sent() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let created =
        cli(dir.path(), &["site", "create", "--json", "--name", "Crash", "--vertical", "dental", "--tier", "pro", "--currency", "EUR", "--lang", "en"]).await;
    let site = serde_json::from_slice::<Value>(&created.stdout).unwrap()["siteId"].as_str().unwrap().to_owned();
    // Bad settings are refused with a clear reason and change nothing.
    for (flag, value, says) in [
        ("--handoff-hours", "Mon-Fri 9-17", "is not a time"),
        ("--handoff-hours", "Mon-Fri 17:00-09:00", "split a range over midnight"),
        ("--handoff-timezone", "Mars/Olympus", "IANA time zone"),
        ("--handoff-closed", "24.12.2026", "is not a date"),
        ("--handoff-wait", "0", "0"),
    ] {
        let out = cli(dir.path(), &["site", "update", &site, flag, value]).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{flag} {value}: {err}");
    }
    let out = cli(
        dir.path(),
        &[
            "site", "update", &site, "--handoff", "on", "--handoff-hours", "", "--handoff-timezone", "Europe/Berlin", "--handoff-closed",
            "2026-12-24,2026-12-25", "--handoff-wait", "600",
        ],
    )
    .await;
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && shown.contains("hand-off:       on; hours every hour (Europe/Berlin), closed 2026-12-24,2026-12-25; visitors wait 600 s"),
        "{shown}"
    );
    let added = cli(dir.path(), &["user", "add", "--json", "--email", "ada@example.com", "--site", &site, "--role", "editor", "--display-name", "Ada"]).await;
    let link = serde_json::from_slice::<Value>(&added.stdout).unwrap()["setupLink"].as_str().unwrap().to_owned();
    let setup = &link[link.find("/console/setup/").unwrap()..];

    let (mut server, base) = serve(dir.path()).await;
    let pem = std::fs::read(sitebot::http::tls::self_signed_paths(dir.path()).0).unwrap();
    let client = crate::helpers::client_for(&pem);
    let set = client.post(format!("{base}{setup}")).header("Origin", &base).form(&[("password", PASSWORD), ("repeat", PASSWORD)]).send().await.unwrap();
    let cookie = session_cookie(set.headers()).unwrap();
    let page = client.get(format!("{base}/console/sites")).header("Cookie", &cookie).send().await.unwrap().text().await.unwrap();
    let at = page.find("name=\"csrf\" value=\"").unwrap() + "name=\"csrf\" value=\"".len();
    let csrf = page[at..].split('"').next().unwrap().to_owned();
    let inbox = client.get(format!("{base}/console/sites/{site}/inbox/events")).header("Cookie", &cookie).send().await.unwrap();
    assert_eq!(inbox.status(), StatusCode::OK);

    let answer: Value =
        client.post(format!("{base}/v1/query")).header("X-Site-Id", &site).json(&json!({"question": "Hello?"})).send().await.unwrap().json().await.unwrap();
    let (cid, token) = (answer["conversationId"].as_str().unwrap().to_owned(), answer["conversationToken"].as_str().unwrap().to_owned());
    let visitor = {
        let (client, site, cid, token) = (client.clone(), site.clone(), cid.clone(), token.clone());
        move |base: &str, what: &str| {
            client.post(format!("{base}/v1/conversations/{cid}/{what}")).header("X-Site-Id", &site).header("X-Conversation-Token", &token)
        }
    };
    let staff = {
        let (client, site, cid, cookie, csrf) = (client.clone(), site.clone(), cid.clone(), cookie.clone(), csrf.clone());
        move |base: &str, what: &str, text: &str| {
            client
                .post(format!("{base}/console/sites/{site}/inbox/{cid}/{what}"))
                .header("Cookie", &cookie)
                .header("Origin", base)
                .form(&[("csrf", csrf.as_str()), ("text", text)])
        }
    };
    assert_eq!(visitor(&base, "handoff").send().await.unwrap().status(), StatusCode::ACCEPTED);
    assert_eq!(staff(&base, "take", "").send().await.unwrap().status(), StatusCode::SEE_OTHER);
    let stream =
        client.get(format!("{base}/v1/conversations/{cid}/events")).header("X-Site-Id", &site).header("X-Conversation-Token", &token).send().await.unwrap();
    let mut before = Stream::new(stream);

    // Both sides write as fast as they are answered; the kill lands among them. What each was told
    // was sent (a 202, a 303) is recorded.
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let writers = (0..2).map(|side| {
        let (acked, visitor, staff, base) = (acked.clone(), visitor.clone(), staff.clone(), base.clone());
        tokio::spawn(async move {
            for i in 0.. {
                let text = format!("{} {i}", if side == 0 { "visitor" } else { "staff" });
                let sent =
                    if side == 0 { visitor(&base, "messages").json(&json!({"text": text})).send().await } else { staff(&base, "reply", &text).send().await };
                match sent {
                    Ok(r) if r.status() == StatusCode::ACCEPTED || r.status() == StatusCode::SEE_OTHER => acked.lock().unwrap().push(text),
                    Ok(r) if r.status() == StatusCode::TOO_MANY_REQUESTS => tokio::time::sleep(Duration::from_millis(200)).await,
                    _ => break,
                }
            }
        })
    });
    let writers: Vec<_> = writers.collect();
    let mut told: Vec<Sse> = Vec::new();
    while told.len() < 30 {
        told.push(before.next(Duration::from_secs(10)).await.expect("events while both write"));
    }
    server.kill().await.unwrap();
    for w in writers {
        w.await.unwrap();
    }
    while let Some(e) = before.next(Duration::from_millis(200)).await {
        told.push(e);
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() >= 20, "{} acknowledged before the kill", acked.len());

    let (mut server, base) = serve(dir.path()).await;
    let resume = |last: Option<String>| {
        let mut req = client.get(format!("{base}/v1/conversations/{cid}/events")).header("X-Site-Id", &site).header("X-Conversation-Token", &token);
        if let Some(l) = last {
            req = req.header("Last-Event-ID", l);
        }
        req.send()
    };
    let mut rest = Stream::new(resume(told.last().map(|e| e.0.clone())).await.unwrap());
    let mut after: Vec<Sse> = Vec::new();
    while let Some(e) = rest.next(Duration::from_millis(800)).await {
        after.push(e);
    }
    let mut all = Stream::new(resume(None).await.unwrap());
    let mut everything: Vec<Sse> = Vec::new();
    while let Some(e) = all.next(Duration::from_millis(800)).await {
        everything.push(e);
    }
    let text = |e: &Sse| serde_json::from_str::<Value>(&e.2).unwrap()["text"].as_str().map(str::to_owned);
    let stored: Vec<String> = everything.iter().filter_map(text).collect();
    for a in &acked {
        assert_eq!(stored.iter().filter(|s| *s == a).count(), 1, "`{a}` was acknowledged, so it is stored once");
    }
    let resumed: Vec<Sse> = told.iter().chain(&after).cloned().collect();
    assert_eq!(resumed, everything, "what the visitor saw before the kill and after resuming is everything, once, in order");
    // The conversation is still held after the restart: the staff's session and hold carry on.
    assert_eq!(staff(&base, "reply", "after the restart").send().await.unwrap().status(), StatusCode::SEE_OTHER);
    assert_eq!(text(&rest.next(Duration::from_secs(10)).await.unwrap()).as_deref(), Some("after the restart"));
    println!("killed mid-conversation: {} messages acknowledged, {} events before the kill, {} after resuming", acked.len(), told.len(), after.len());
    server.kill().await.unwrap();
}
