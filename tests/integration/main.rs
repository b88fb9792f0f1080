//! Integration tests: every call goes through the real component under the real host.
//! One test binary; helpers in `support`.

#![allow(clippy::unwrap_used)]
mod support;

mod adversarial;
mod answers;
mod approval;
mod audit;
mod changes;
mod cli;
mod cli_conventions;
mod concurrency;
mod crash;
mod encodings;
mod git_apply;
mod git_shape_as_git_sees_it;
mod hygiene;
mod index;
mod index_build;
mod index_watch;
mod limits;
mod list;
mod long_calls;
mod mcp_stdio;
mod media;
mod metrics;
mod mutate;
mod paths;
mod policy;
mod pooling;
mod races;
mod read;
mod scenarios;
mod search;
mod trust_boundary;
mod wasmtime_cli;
mod watch_limit;
mod workspace;
