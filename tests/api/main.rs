//! Integration tests: one binary, a module per resource, each test against the real server over TLS.

mod helpers;
mod receiver;
mod wire;

mod abuse;
mod browser;
mod connections;
mod conversations;
mod early_answers;
mod edge;
mod erasure;
mod knowledge;
mod landing;
mod leads;
mod multilingual;
mod operations;
mod pricing;
mod query;
mod stats;
mod stream;
mod webhooks;
