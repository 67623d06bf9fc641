//! Webhook delivery from the durable outbox, signed per Standard Webhooks v1.
//!
//! # Guarantee: at least once
//!
//! An event is written to the `outbox` table in the same SQLite transaction as the change it reports
//! (`store::outbox::enqueue`), so once a lead is acknowledged its event is on disk. The worker claims due
//! events by setting a lease (`store::outbox::claim_due`, one write transaction), sends them, and only
//! then records the outcome. If the process dies between sending and recording, the lease expires and the
//! event is sent again: a receiver may see an event more than once, never zero times, and deduplicates by
//! `webhook-id`, which is the outbox id and stays the same across retries and replays. Events of a site
//! whose endpoint is unset or disabled (410 Gone) are kept and wait. After the last retry an event is
//! `dead`: kept until an operator replays (`sitebot webhooks replay`) or purges it.
//!
//! Modules: [`signing`] (the signature header), [`deliver`] (one HTTP attempt under the URL policy),
//! [`retry`] (when to try again), [`worker`] (claim, deliver, record; `run_once`, `run_until_stopped`).

pub mod deliver;
pub mod retry;
pub mod signing;
pub mod worker;

pub use worker::{Summary, Worker, WorkerError, run_once, run_until_stopped};

#[cfg(test)]
mod tests {
    use crate::domain::{Currency, Lang, Tier, WebhookPolicy, WebhookUrl};
    use crate::secrets::Keyring;
    use crate::store::outbox::{self, Attempt, Next};
    use crate::store::{NewSite, Site, Store, sites};

    fn store_with_site(url: Option<&str>) -> (tempfile::TempDir, Store, Site) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db"), Keyring::from_bytes(&[3; 32])).unwrap();
        let keyring = store.keyring().clone();
        let open = WebhookPolicy { allow_http: true, allow_private_networks: true };
        let new = NewSite {
            name: "S".into(),
            vertical: "dental".into(),
            tier: Tier::Pro,
            currency: Currency::parse("EUR").unwrap(),
            lang: Lang::parse("en").unwrap(),
            allowed_origins: vec![],
            webhook_url: url.map(|u| WebhookUrl::parse(u, open).unwrap()),
            webhook_events: vec!["lead.captured".into()],
        };
        let (site, _) = store.write_blocking(|tx| sites::create(tx, &keyring, new)).unwrap();
        (dir, store, site)
    }

    #[test]
    fn outbox_lease_hides_a_claimed_event_until_it_expires() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let id = store.write_blocking(|tx| outbox::enqueue(tx, &site, "lead.captured", &serde_json::json!({"a": 1}))).unwrap().unwrap();
        let now = chrono::Utc::now().timestamp_millis();
        let first = store.write_blocking(|tx| outbox::claim_due(tx, now, now + 30_000, 10)).unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].id, id);
        assert_eq!(first[0].url, "http://127.0.0.1:9/hook");
        // Leased: another worker (or process) sees nothing.
        assert!(store.write_blocking(|tx| outbox::claim_due(tx, now + 1_000, now + 31_000, 10)).unwrap().is_empty());
        // The worker died: once the lease is over, the event is claimable again, same id.
        let again = store.write_blocking(|tx| outbox::claim_due(tx, now + 30_001, now + 60_000, 10)).unwrap();
        assert_eq!(again.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), vec![id.as_str()]);
    }

    #[test]
    fn outbox_skips_sites_without_an_enabled_endpoint_and_keeps_their_events() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let id = store.write_blocking(|tx| outbox::enqueue(tx, &site, "lead.captured", &1)).unwrap().unwrap();
        let now = chrono::Utc::now().timestamp_millis() + 10;
        let claimed = store.write_blocking(|tx| outbox::claim_due(tx, now, now + 1, 10)).unwrap();
        let attempt = Attempt { attempt: 1, at: crate::store::now_rfc3339(), status_code: Some(410), error: Some("gone".into()), duration_ms: 1 };
        store.write_blocking(|tx| outbox::record_attempt(tx, &claimed[0].id, &site.id, &attempt, &Next::Gone)).unwrap();
        let disabled = store.read_blocking(|c| sites::get(c, &site.id)).unwrap().unwrap();
        assert!(disabled.webhook_disabled_at.is_some());
        let later = now + 60_000;
        assert!(store.write_blocking(|tx| outbox::claim_due(tx, later, later + 1, 10)).unwrap().is_empty());
        assert_eq!(store.read_blocking(outbox::next_due).unwrap(), None);
        let (msg, _, attempts) = store.read_blocking(|c| outbox::get(c, &id)).unwrap().unwrap();
        assert_eq!(msg.status, "pending");
        assert_eq!(msg.attempts, 0, "a 410 does not use up the retry schedule");
        assert_eq!(attempts.len(), 1);
        // Setting the URL again re-enables the endpoint and the waiting event goes out.
        let url = WebhookUrl::parse("http://127.0.0.1:9/new", WebhookPolicy { allow_http: true, allow_private_networks: true }).unwrap();
        let up = crate::store::SiteUpdate { webhook_url: Some(Some(url)), ..Default::default() };
        store.write_blocking(|tx| sites::update(tx, &site.id, up)).unwrap();
        let claimed = store.write_blocking(|tx| outbox::claim_due(tx, later, later + 1, 10)).unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].url, "http://127.0.0.1:9/new");
    }

    #[test]
    fn outbox_replay_starts_a_new_round_with_the_same_id() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let id = store.write_blocking(|tx| outbox::enqueue(tx, &site, "lead.captured", &1)).unwrap().unwrap();
        let now = chrono::Utc::now().timestamp_millis() + 10;
        store.write_blocking(|tx| outbox::claim_due(tx, now, now + 1, 10)).unwrap();
        let attempt = Attempt { attempt: 1, at: crate::store::now_rfc3339(), status_code: Some(500), error: Some("500".into()), duration_ms: 1 };
        store.write_blocking(|tx| outbox::record_attempt(tx, &id, &site.id, &attempt, &Next::Dead)).unwrap();
        assert_eq!(store.read_blocking(|c| outbox::list(c, Some(&site.id), Some("dead"), 10)).unwrap().len(), 1);
        let replayed = store.write_blocking(|tx| outbox::replay(tx, &id)).unwrap();
        assert_eq!((replayed.id.as_str(), replayed.status.as_str(), replayed.attempts), (id.as_str(), "pending", 0));
        let later = chrono::Utc::now().timestamp_millis() + 10;
        let claimed = store.write_blocking(|tx| outbox::claim_due(tx, later, later + 1, 10)).unwrap();
        assert_eq!(claimed[0].id, id);
        store.write_blocking(|tx| outbox::record_attempt(tx, &id, &site.id, &attempt, &Next::Retry(later))).unwrap();
        let (_, _, attempts) = store.read_blocking(|c| outbox::get(c, &id)).unwrap().unwrap();
        assert_eq!(attempts.iter().map(|a| a.attempt).collect::<Vec<_>>(), vec![1, 2], "attempt numbers continue across rounds");
        assert!(matches!(store.write_blocking(|tx| outbox::replay(tx, "msg_nope")), Err(crate::store::StoreError::NotFound)));
    }

    #[test]
    fn outbox_prunes_old_delivered_events_and_keeps_dead_ones() {
        let (_d, store, site) = store_with_site(Some("http://127.0.0.1:9/hook"));
        let ids: Vec<String> = (0..3).map(|_| store.write_blocking(|tx| outbox::enqueue(tx, &site, "lead.captured", &1)).unwrap().unwrap()).collect();
        let old = (chrono::Utc::now() - chrono::Duration::hours(25)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let recent = crate::store::now_rfc3339();
        store
            .write_blocking(|tx| {
                tx.execute("UPDATE outbox SET status = 'delivered', delivered_at = ?2 WHERE id = ?1", rusqlite::params![ids[0], old])?;
                tx.execute("UPDATE outbox SET status = 'delivered', delivered_at = ?2 WHERE id = ?1", rusqlite::params![ids[1], recent])?;
                tx.execute("UPDATE outbox SET status = 'dead', created_at = ?2 WHERE id = ?1", rusqlite::params![ids[2], old])?;
                Ok(())
            })
            .unwrap();
        let pruned = store.write_blocking(|tx| outbox::prune_delivered(tx, crate::store::leads::IDEMPOTENCY_WINDOW_SECS)).unwrap();
        assert_eq!(pruned, 1);
        let left: Vec<String> = store.read_blocking(|c| outbox::list(c, Some(&site.id), None, 10)).unwrap().into_iter().map(|m| m.id).collect();
        assert_eq!(left.len(), 2);
        assert!(left.contains(&ids[1]) && left.contains(&ids[2]) && !left.contains(&ids[0]));
    }
}
