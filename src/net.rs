//! Outbound HTTP plumbing shared by every client that follows [`NetworkPolicy`] (webhooks, the crawler,
//! the answer generator).

use std::net::{IpAddr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::domain::NetworkPolicy;

/// A client builder with what every outbound client under a [`NetworkPolicy`] needs together: the
/// [`CheckedResolver`], no redirects and no proxy (either could lead a request past the address check; a
/// caller that follows redirects does so by hand, checking each hop), rustls, and `user_agent`. The caller
/// adds its timeouts and pool settings.
pub fn checked_client(policy: NetworkPolicy, setting: &'static str, user_agent: &'static str) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .use_rustls_tls()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(std::sync::Arc::new(CheckedResolver { policy, setting }))
        .user_agent(user_agent)
}

/// Resolves with the system resolver and refuses a name if any of its addresses is one the policy does
/// not allow. The client connects only to the addresses checked here, so a DNS answer that changed since
/// the URL was configured (rebinding) cannot reach the internal network. IP-literal hosts never reach a
/// resolver: check them with [`crate::domain::check_endpoint`] before sending.
#[derive(Debug)]
pub struct CheckedResolver {
    pub policy: NetworkPolicy,
    /// The setting named in the refusal, e.g. `webhooks.allow_private_networks`.
    pub setting: &'static str,
}

#[derive(Debug, thiserror::Error)]
#[error("refused: {host} resolves to {ip}, {hint}")]
struct RefusedAddress {
    host: String,
    ip: IpAddr,
    hint: String,
}

/// Why `ip` is refused and which setting would allow it.
fn hint(ip: IpAddr, setting: &str) -> String {
    if crate::domain::is_link_local_or_metadata(ip) {
        let section = setting.split('.').next().unwrap_or(setting);
        format!("a link-local or metadata address (the operator can name it in {section}.allowed_link_local)")
    } else {
        format!("which is not a public address (the operator can set {setting} = true)")
    }
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let (policy, setting) = (self.policy.clone(), self.setting);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(bad) = addrs.iter().find(|a| !policy.allows(a.ip())) {
                return Err(Box::new(RefusedAddress { host, hint: hint(bad.ip(), setting), ip: bad.ip() }) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// An error and its causes, `: `-joined (reqwest's own message hides the useful part in the sources).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
