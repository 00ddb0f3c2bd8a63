#pragma once
/// The model builders behind model_registry.h, one per file. Each writes a
/// complete trace (ANNOTATE START ... backward ... final releases) for
/// options whose zero fields the registry has already replaced by defaults.
#include "dtr/models/model_registry.h"

namespace dtr::models {

void build_chain(const ModelOptions& o, trace::TraceWriter& out);
void build_resnet(const ModelOptions& o, trace::TraceWriter& out);
void build_densenet(const ModelOptions& o, trace::TraceWriter& out);
void build_unet(const ModelOptions& o, trace::TraceWriter& out);
void build_lstm(const ModelOptions& o, trace::TraceWriter& out);
void build_treelstm(const ModelOptions& o, trace::TraceWriter& out);
void build_transformer(const ModelOptions& o, trace::TraceWriter& out);

}  // namespace dtr::models
