//! Handlers of the public API, one module per resource. Each reads its inputs through the extractors
//! of `http` (parsed, validated) and its tenant through `Data<&Tenant>`.

pub mod events;
pub mod feedback;
pub mod health;
pub mod landing;
pub mod leads;
pub mod multimodal;
pub mod pricing;
pub mod query;
pub mod stats;
pub mod stream;
pub mod widget;
