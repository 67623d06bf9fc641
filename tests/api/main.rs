//! Integration tests: one binary, a module per resource, each test against the real server over TLS.

mod helpers;
mod model;
mod receiver;
#[path = "../common/served.rs"]
mod served;
#[path = "../common/website.rs"]
mod website;
mod wire;

mod abuse;
mod browser;
mod connections;
mod console;
mod contract;
mod conversations;
mod crawl;
mod curated;
mod early_answers;
mod edge;
mod erasure;
mod fair_use;
mod generative;
mod handoff;
mod insights;
mod knowledge;
mod landing;
mod leads;
mod multilingual;
mod operations;
mod pricing;
mod query;
mod stats;
mod storage;
mod stream;
mod webhooks;
// #25 settings
mod console_settings;

// #25 widget
mod console_widget;
// #25 oidc
mod console_oidc;
// #25 email
mod email;
// #25 knowledge
mod console_knowledge;
