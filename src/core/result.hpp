// SPDX-License-Identifier: Apache-2.0
// Result<T>: a value, or an Error the caller is expected to handle (fatal problems throw
// gua::Fatal).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gua {

/// What kind of failure an Error is, for callers that treat some kinds differently (control flow
/// branches on the kind, never on the message's text).
enum class ErrorKind {
    other,            ///< anything not listed below
    version_mismatch, ///< the NVIDIA driver and its library differ (retrying may help)
    gone,             ///< the process in question no longer exists
};

/// A recoverable failure with a one-line, user-readable message.
struct Error {
    std::string message;
    ErrorKind kind = ErrorKind::other;
};

/// Holds either a T or an Error; check ok() before value(). [[nodiscard]]: a call whose Result
/// is dropped is a compile error (-Werror), so no failure goes unlooked at.
template <typename T> class [[nodiscard]] Result {
  public:
    Result(T value) : m_data(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_data(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_data.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(m_data); }
    const T& value() const& { return std::get<0>(m_data); }
    T&& value() && { return std::get<0>(std::move(m_data)); }
    const Error& error() const { return std::get<1>(m_data); }
    T value_or(T fallback) const { return ok() ? value() : std::move(fallback); }

  private:
    std::variant<T, Error> m_data;
};

/// Result of an operation without a value.
template <> class [[nodiscard]] Result<void> {
  public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)), m_ok(false) {}

    bool ok() const { return m_ok; }
    explicit operator bool() const { return m_ok; }
    const Error& error() const { return m_error; }

  private:
    Error m_error;
    bool m_ok = true;
};

} // namespace gua
