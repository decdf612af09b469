// Copyright 2026 vepd_ros developers
//
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file or at
// https://developers.google.com/open-source/licenses/bsd

// Stand-in: the stamp type of std_msgs/Header, which filter_utilities.hpp names.

#ifndef STD_MSGS__MSG__HEADER_HPP_
#define STD_MSGS__MSG__HEADER_HPP_

#include <cstdint>

namespace std_msgs
{
namespace msg
{

struct Header
{
  struct Stamp
  {
    int32_t sec;
    uint32_t nanosec;
  };
  typedef Stamp _stamp_type;
  _stamp_type stamp;
};

}  // namespace msg
}  // namespace std_msgs

#endif  // STD_MSGS__MSG__HEADER_HPP_
