//! Integration tests: one binary, a module per resource, each test against the real server over TLS.

mod helpers;
mod receiver;

mod edge;
mod landing;
mod leads;
mod pricing;
mod stats;
mod webhooks;
mod knowledge;
mod query;
mod stream;
