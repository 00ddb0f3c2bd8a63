#include "dtr/core/staging.h"

#include <utility>

namespace dtr {

// Note [Staging]
// A training loop repeats one step; staging replays the eviction decisions
// of one step in the next instead of searching again. A step is the run of
// calls between two begin_step()s (a second begin_step() with no call in
// between is the same boundary). Each step is recorded as a StepPlan: a
// signature per call (name, output sizes and aliasing) and every eviction
// request that did not fit (make_room), with the storages it evicted named
// by position (VictimRef), since ids differ from step to step.
//
// A step with a plan is *staged*: request k evicts the plan's k-th victims,
// with no call to Heuristic::choose, as long as the program matches what
// was recorded: the same call signatures in the same order, request k made
// at the same call for the same bytes, every planned victim resolvable and
// in the eviction pool, and the victims freeing exactly enough room (the
// runtime stops at the first that makes it fit). At the first mismatch the
// step *diverges*: the rest of it runs online (the heuristic searches), so
// the budget is enforced either way: make_room evicts until the request
// fits, whatever the plan says. Replays are not planned: they follow from
// the same evictions at the same points, as in the recorded step.
//
// The plan of step k+1 is the record of step k when step k had no plan or
// diverged; a staged step's record equals its plan, so the plan is kept.
// load() replaces this with given plans (the simulator replays an online
// run's own steps: same decisions, so the same compute and peak).

namespace {

// FNV-1a over the call's name and its outputs' (bytes, alias) pairs.
std::uint64_t call_signature(const Graph& g, const Op& op) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  for (char c : op.name) mix(static_cast<unsigned char>(c));
  mix(op.outputs.size());
  for (TensorId t : op.outputs) {
    const Tensor& tensor = g.tensor(t);
    mix(static_cast<std::uint64_t>(tensor.bytes));
    mix(tensor.is_alias ? 1 : 0);
  }
  return h;
}

}  // namespace

void Staging::load(std::vector<StepPlan> plans) {
  queued_ = std::move(plans);
  next_queued_ = 0;
  if (this_step_.calls() == 0 && record_.rooms.empty()) {
    plan_ =
        next_queued_ < queued_.size() ? queued_[next_queued_++] : StepPlan{};
    staged_ = !plan_.empty();
    room_cursor_ = 0;
  }
}

void Staging::begin_step() {
  if (this_step_.calls() == 0) return;  // one boundary, not two
  finish_step();
}

void Staging::finish_step() {
  ++stats_.steps;
  const bool had_plan = !plan_.empty();
  const bool matched = staged_ && room_cursor_ == plan_.rooms.size() &&
                       plan_.calls.size() == record_.calls.size();
  if (had_plan) ++(matched ? stats_.staged_steps : stats_.diverged_steps);
  if (keep_records_) captured_.push_back(record_);
  if (next_queued_ < queued_.size()) {
    plan_ = queued_[next_queued_++];
  } else if (!queued_.empty()) {
    plan_ = StepPlan{};  // the loaded plans are used up: online
  } else if (!replay_previous_) {
    plan_ = StepPlan{};
  } else if (!matched) {
    plan_ = std::move(record_);
  }
  record_ = StepPlan{};
  staged_ = !plan_.empty();
  room_cursor_ = 0;
  std::swap(last_step_, this_step_);
  this_step_.clear();
  ++step_;
}

void Staging::on_call(const Graph& g, OpId op_id) {
  const Op& op = g.op(op_id);
  const std::uint32_t call = this_step_.calls();
  for (std::uint32_t i = 0; i < op.outputs.size(); ++i) {
    const Tensor& t = g.tensor(op.outputs[i]);
    if (t.is_alias) {
      this_step_.storages.push_back(kNoId);
      continue;
    }
    if (t.storage >= origin_.size()) origin_.resize(t.storage + 1);
    origin_[t.storage] = Origin{step_, call, i};
    this_step_.storages.push_back(t.storage);
  }
  this_step_.offsets.push_back(
      static_cast<std::uint32_t>(this_step_.storages.size()));
  const std::uint64_t signature = call_signature(g, op);
  record_.calls.push_back(signature);
  if (staged_ && (call >= plan_.calls.size() || plan_.calls[call] != signature))
    diverge();
}

VictimRef Staging::name_victim(StorageId s) const {
  const Origin o = s < origin_.size() ? origin_[s] : Origin{};
  if (o.step == step_) return {VictimRef::Kind::kThisStep, o.call, o.output};
  if (o.step != 0 && o.step + 1 == step_) {
    return {VictimRef::Kind::kLastStep, o.call, o.output};
  }
  return {VictimRef::Kind::kStorage, 0, 0, s};
}

// kNoId when the position names nothing, or a storage that was recycled
// since (its origin no longer matches).
StorageId Staging::resolve(const VictimRef& v) const {
  if (v.kind == VictimRef::Kind::kStorage) return v.storage;
  const CallTable& table =
      v.kind == VictimRef::Kind::kThisStep ? this_step_ : last_step_;
  const std::uint64_t step =
      v.kind == VictimRef::Kind::kThisStep ? step_ : step_ - 1;
  if (v.call >= table.calls()) return kNoId;
  const std::uint32_t slot = table.offsets[v.call] + v.output;
  if (slot >= table.offsets[v.call + 1]) return kNoId;
  const StorageId s = table.storages[slot];
  if (s == kNoId || s >= origin_.size()) return kNoId;
  const Origin& o = origin_[s];
  return o.step == step && o.call == v.call && o.output == v.output ? s : kNoId;
}

void Staging::begin_room(std::int64_t bytes, std::vector<StorageId>& out) {
  out.clear();
  planned_ran_out_ = false;
  record_.rooms.push_back(PlannedRoom{this_step_.calls(), bytes, {}});
  if (!staged_) return;
  if (room_cursor_ >= plan_.rooms.size()) {
    diverge();
    return;
  }
  const PlannedRoom& room = plan_.rooms[room_cursor_++];
  if (room.call != this_step_.calls() || room.bytes != bytes) {
    diverge();
    return;
  }
  planned_ran_out_ = room.ran_out;
  for (const VictimRef& v : room.victims) {
    const StorageId s = resolve(v);
    if (s == kNoId) {
      out.clear();
      diverge();
      return;
    }
    out.push_back(s);
  }
}

void Staging::on_victim(StorageId s, bool planned) {
  if (planned) ++stats_.planned_evictions;
  record_.rooms.back().victims.push_back(name_victim(s));
}

}  // namespace dtr
