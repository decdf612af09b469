# Copyright 2026 vepd_ros developers
#
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file or at
# https://developers.google.com/open-source/licenses/bsd

# Included by tools/rl_build/build.py through CMAKE_PROJECT_robot_localization_INCLUDE, i.e. right
# after robot_localization's project(): every target it defines links yaml-cpp (the system's, found
# through the 0.7-as-0.8 shim). robot_localization's ros2 branch links yaml-cpp only through
# yaml_cpp_vendor's exports, which are empty when the vendor package uses the system's yaml-cpp;
# without this librl_lib.so fails at run time (undefined symbol _ZTVN4YAML9ExceptionE).
find_package(yaml-cpp 0.7 REQUIRED CONFIG)
link_libraries(yaml-cpp)
