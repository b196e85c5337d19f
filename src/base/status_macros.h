#pragma once

// Early-return helpers for absl::Status and absl::StatusOr (the Abseil release in Debian 12 has
// none of its own). The geometry, tree and query layers never return statuses; every layer from
// the scene up uses these.

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

/// Evaluates `expr` (an absl::Status) once and returns it from the enclosing function when it is
/// not OK.
#define COLLIDE_RETURN_IF_ERROR(expr)                     \
  do {                                                    \
    ::absl::Status collide_status_macro_status_ = (expr); \
    if (!collide_status_macro_status_.ok()) {             \
      return collide_status_macro_status_;                \
    }                                                     \
  } while (false)

/// Evaluates the absl::StatusOr<T> expression after `lhs` once; on error returns its status from
/// the enclosing function, otherwise moves the value into `lhs`, which may be a declaration
/// (`COLLIDE_ASSIGN_OR_RETURN(auto x, F());`) or an existing lvalue. Expands to more than one
/// statement: do not use it as the body of an unbraced if/else. `lhs` must not contain an
/// unparenthesised comma.
#define COLLIDE_ASSIGN_OR_RETURN(lhs, ...) \
  COLLIDE_ASSIGN_OR_RETURN_IMPL_(          \
      COLLIDE_STATUS_MACRO_CONCAT_(collide_status_macro_or_, __COUNTER__), lhs, __VA_ARGS__)

#define COLLIDE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, ...) \
  auto tmp = (__VA_ARGS__);                           \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(tmp).value()

#define COLLIDE_STATUS_MACRO_CONCAT_INNER_(a, b) a##b
#define COLLIDE_STATUS_MACRO_CONCAT_(a, b) COLLIDE_STATUS_MACRO_CONCAT_INNER_(a, b)
