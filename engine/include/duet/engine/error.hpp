// The one exception type the engine throws: a failure a user can act on, with its reason.
#pragma once

#include <stdexcept>
#include <string>

namespace duet::engine {

/// A recoverable failure (no GL, bad shader, unwritable PNG, bad parameter). The app loop catches
/// it, prints what() as one line (plus any log it carries) and exits non-zero.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error; ///< Error("what went wrong, one line")
};

} // namespace duet::engine
