//! The `types` interface: records and enums only, so nothing to implement.

use super::state::HostState;
use crate::bindings::agent;

impl agent::file_tools::types::Host for HostState {}
