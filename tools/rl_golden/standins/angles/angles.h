// Copyright 2026 vepd_ros developers
//
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file or at
// https://developers.google.com/open-source/licenses/bsd

// Stand-in for the ROS angles package's normalize_angle: wrap to (-pi, pi] by
// r = fmod(a + pi, 2 pi); r <= 0 -> r + pi, else r - pi (the package's arithmetic, same order).

#ifndef ANGLES__ANGLES_H_
#define ANGLES__ANGLES_H_

#include <cmath>

namespace angles
{

static inline double normalize_angle(double angle)
{
  const double result = std::fmod(angle + M_PI, 2.0 * M_PI);
  if (result <= 0.0) {
    return result + M_PI;
  }
  return result - M_PI;
}

}  // namespace angles

#endif  // ANGLES__ANGLES_H_
