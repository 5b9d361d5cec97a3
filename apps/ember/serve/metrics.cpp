#include "serve/metrics.h"

#include <cstdio>

namespace serve {
namespace {

void Add(std::string* out, const char* name, const char* type, const char* help, double value) {
  *out += std::string("# HELP ") + name + " " + help + "\n";
  *out += std::string("# TYPE ") + name + " " + type + "\n";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  *out += std::string(name) + " " + buf + "\n";
}

}  // namespace

std::string RenderMetrics(const Metrics& m, const Gauges& g) {
  std::string out;
  Add(&out, "ember_requests_total", "counter", "generation requests accepted",
      static_cast<double>(m.requests.load()));
  Add(&out, "ember_requests_failed_total", "counter", "requests answered with an error",
      static_cast<double>(m.requests_failed.load()));
  Add(&out, "ember_requests_rejected_total", "counter",
      "requests refused because the queue was full",
      static_cast<double>(m.rejected_queue_full.load()));
  Add(&out, "ember_requests_cancelled_total", "counter",
      "generations cancelled (client gone or shutdown)", static_cast<double>(m.cancelled.load()));
  Add(&out, "ember_prompt_tokens_total", "counter", "prompt tokens processed",
      static_cast<double>(m.prompt_tokens.load()));
  Add(&out, "ember_prompt_tokens_reused_total", "counter",
      "prompt tokens found in a slot's cache (not recomputed)",
      static_cast<double>(m.prompt_tokens_reused.load()));
  Add(&out, "ember_tokens_generated_total", "counter", "tokens generated",
      static_cast<double>(m.generated_tokens.load()));
  Add(&out, "ember_draft_tokens_total", "counter",
      "speculative decoding (--draft-model, --lookup): drafted tokens verified",
      static_cast<double>(m.drafted_tokens.load()));
  Add(&out, "ember_draft_tokens_accepted_total", "counter",
      "speculative decoding: drafted tokens the model kept",
      static_cast<double>(m.accepted_tokens.load()));
  Add(&out, "ember_slots_total", "gauge", "generation slots", g.slots_total);
  Add(&out, "ember_slots_busy", "gauge", "slots generating now", g.slots_busy);
  Add(&out, "ember_queue_length", "gauge", "requests waiting for a slot",
      static_cast<double>(g.queue_length));
  Add(&out, "ember_queue_capacity", "gauge", "requests the queue holds before answering 429",
      static_cast<double>(g.queue_capacity));
  Add(&out, "ember_batch_passes_total", "counter",
      "forward passes run for the slots (continuous batching; 0 with one slot)",
      static_cast<double>(g.batch_passes));
  Add(&out, "ember_batch_sequences_total", "counter",
      "slot steps in those passes (divided by the passes: slots per pass)",
      static_cast<double>(g.batch_sequences));
  Add(&out, "ember_batch_late_total", "counter",
      "passes that went without a generating slot that was late (a slow client)",
      static_cast<double>(g.batch_late));
  return out;
}

}  // namespace serve
