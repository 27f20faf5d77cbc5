// duet-displays' two outputs of one DisplayReport: a readable table and JSON (nlohmann::json).
#pragma once

#include "duet/interop/displays.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace duet::displays {

/// "CPU", "GPU", "ACCELERATOR", "CUSTOM", or several joined by '|'.
std::string deviceTypeName(cl_device_type type);

/// The report as JSON. Layout: {"platforms": [...], "platforms_error", "gpus": {"note", "list"},
/// "x": null | {"display", "opened", "error", "glx_version", "screens": [{"name", ..., "gl"}]},
/// "egl": null | {"error", "devices": [{"index", "drm_device_file", ..., "gl"}]},
/// "gl_contexts", "gl_contexts_sharing", "any_sharing"}; each "gl" is {"made", "error", "renderer",
/// "vendor", "version", "can_share", "sharing": [{"platform", "unsupported", "current": {"devices",
/// "error"}, "devices": {"devices", "error"}}]}. Absent strings are null.
nlohmann::ordered_json toJson(const interop::DisplayReport& report);

/// The report as an aligned plain-text table, ending with a one-line summary that says whether
/// any GL context listed can share with an OpenCL device.
std::string toTable(const interop::DisplayReport& report);

} // namespace duet::displays
