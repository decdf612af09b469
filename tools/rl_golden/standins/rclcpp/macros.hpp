// Copyright 2026 vepd_ros developers
//
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file or at
// https://developers.google.com/open-source/licenses/bsd

// Stand-in: the one rclcpp macro robot_localization's filter headers may name.

#ifndef RCLCPP__MACROS_HPP_
#define RCLCPP__MACROS_HPP_

#include <memory>

#define RCLCPP_SMART_PTR_DEFINITIONS(...) \
  using SharedPtr = std::shared_ptr<__VA_ARGS__>;

#endif  // RCLCPP__MACROS_HPP_
