//! Metrics of every tool call, in the Prometheus text format: calls by tool and outcome,
//! call durations, bytes read and written, fuel used. One [`Metrics`] serves any number of
//! sessions: it is a [`CallObserver`], given to each with
//! `SessionBuilder::observer`; an embedder scrapes it with [`Metrics::encode`], the CLI
//! fills one from an audit log (`file-tools metrics FILE`). The outcomes are those of
//! [`CallRecord::outcome`].

use file_tools_host::{CallObserver, CallRecord};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// The labels of one call.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    tool: String,
    outcome: String,
}

/// The label of a tool.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: String,
}

/// The counters and histograms of every call, and the registry that exposes them.
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    duration: Family<ToolLabel, Histogram>,
    bytes_read: Family<ToolLabel, Counter>,
    bytes_written: Family<ToolLabel, Counter>,
    fuel: Family<ToolLabel, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics(..)")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Empty metrics, registered under the `file_tools` prefix.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("file_tools");
        let calls = Family::<CallLabels, Counter>::default();
        // 100 µs to about 26 s, doubling.
        let duration = Family::<ToolLabel, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.0001, 2.0, 19))
        });
        let bytes_read = Family::<ToolLabel, Counter>::default();
        let bytes_written = Family::<ToolLabel, Counter>::default();
        let fuel = Family::<ToolLabel, Counter>::default();
        registry.register(
            "tool_calls",
            "Tool calls by tool and outcome",
            calls.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "Wall-clock time of tool calls",
            duration.clone(),
        );
        registry.register(
            "bytes_read",
            "Bytes of file content tool calls read",
            bytes_read.clone(),
        );
        registry.register(
            "bytes_written",
            "Bytes tool calls wrote",
            bytes_written.clone(),
        );
        registry.register("fuel_used", "Fuel (compute) tool calls used", fuel.clone());
        Metrics {
            registry,
            calls,
            duration,
            bytes_read,
            bytes_written,
            fuel,
        }
    }

    /// Counts one call.
    pub fn count(&self, call: &CallRecord) {
        let tool = ToolLabel {
            tool: call.tool.clone(),
        };
        self.calls
            .get_or_create(&CallLabels {
                tool: call.tool.clone(),
                outcome: call.outcome.clone(),
            })
            .inc();
        self.duration
            .get_or_create(&tool)
            .observe(call.duration.as_secs_f64());
        self.bytes_read.get_or_create(&tool).inc_by(call.bytes_read);
        self.bytes_written
            .get_or_create(&tool)
            .inc_by(call.bytes_written);
        self.fuel.get_or_create(&tool).inc_by(call.fuel);
    }

    /// Everything counted so far, in the Prometheus text format (OpenMetrics flavour,
    /// ending in `# EOF`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

impl CallObserver for Metrics {
    fn record(&self, call: &CallRecord) {
        self.count(call);
    }
}
