// Copyright 2026 vepd_ros developers
//
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file or at
// https://developers.google.com/open-source/licenses/bsd

// Stand-in for the two rclcpp types robot_localization's filter core uses: Time and Duration, both
// an int64 count of nanoseconds, with rclcpp's semantics for what the core calls:
//   Duration(sec, nsec)      sec * 1e9 + nsec (int64)
//   Duration::from_seconds   static_cast<int64_t>(seconds * 1e9) (truncation, as rclcpp)
//   Duration::seconds()      chrono's double conversion: ns / 1e9 (a division, as rclcpp)
//   Time - Time              a Duration of the difference in ns (one clock type here: ROS time)
// The real header pulls in much of the standard library; filter_base.cpp relies on <iomanip>
// (std::setprecision) arriving that way, so this one includes it too.
// Written for vepd_ros's golden driver; no rclcpp code.

#ifndef RCLCPP__TIME_HPP_
#define RCLCPP__TIME_HPP_

#include <cstdint>
#include <iomanip>
#include <stdexcept>

typedef int64_t rcl_time_point_value_t;
typedef int64_t rcl_duration_value_t;
typedef enum rcl_clock_type_e
{
  RCL_CLOCK_UNINITIALIZED = 0,
  RCL_ROS_TIME,
  RCL_SYSTEM_TIME,
  RCL_STEADY_TIME
} rcl_clock_type_t;

namespace rclcpp
{

class Duration
{
public:
  Duration()
  : ns_(0) {}
  Duration(int32_t seconds, uint32_t nanoseconds)
  : ns_(static_cast<int64_t>(seconds) * 1000000000LL + nanoseconds) {}

  static Duration from_nanoseconds(rcl_duration_value_t ns)
  {
    Duration d;
    d.ns_ = ns;
    return d;
  }
  static Duration from_seconds(double seconds)
  {
    return from_nanoseconds(static_cast<int64_t>(seconds * 1e9));
  }

  rcl_duration_value_t nanoseconds() const {return ns_;}
  double seconds() const {return static_cast<double>(ns_) / 1e9;}

  bool operator>(const Duration & o) const {return ns_ > o.ns_;}
  bool operator>=(const Duration & o) const {return ns_ >= o.ns_;}
  bool operator<(const Duration & o) const {return ns_ < o.ns_;}
  bool operator<=(const Duration & o) const {return ns_ <= o.ns_;}
  bool operator==(const Duration & o) const {return ns_ == o.ns_;}

private:
  rcl_duration_value_t ns_;
};

class Time
{
public:
  Time(int64_t nanoseconds = 0, rcl_clock_type_t = RCL_ROS_TIME)  // NOLINT
  : ns_(nanoseconds)
  {
    if (nanoseconds < 0) {
      throw std::runtime_error("cannot store a negative time point in rclcpp::Time");
    }
  }
  Time(int32_t seconds, uint32_t nanoseconds, rcl_clock_type_t = RCL_ROS_TIME)
  : ns_(static_cast<int64_t>(seconds) * 1000000000LL + nanoseconds) {}

  rcl_time_point_value_t nanoseconds() const {return ns_;}
  double seconds() const {return static_cast<double>(ns_) / 1e9;}

  Duration operator-(const Time & o) const {return Duration::from_nanoseconds(ns_ - o.ns_);}
  Time operator+(const Duration & d) const {return Time(ns_ + d.nanoseconds());}
  bool operator>(const Time & o) const {return ns_ > o.ns_;}
  bool operator>=(const Time & o) const {return ns_ >= o.ns_;}
  bool operator<(const Time & o) const {return ns_ < o.ns_;}
  bool operator<=(const Time & o) const {return ns_ <= o.ns_;}
  bool operator==(const Time & o) const {return ns_ == o.ns_;}

private:
  rcl_time_point_value_t ns_;
};

}  // namespace rclcpp

#endif  // RCLCPP__TIME_HPP_
