//! Integration tests: one binary, a module per resource, each test against the real server over TLS.

mod helpers;

mod edge;
