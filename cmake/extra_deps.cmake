# Extra dependencies of the render stage (attnprof_render), included by CMakeLists.txt.

# TensorBoard event encoding (cpp/src/render/tensorboard_writer.cpp): Debian's libprotobuf +
# protoc generate C++ from our subset of TensorBoard's protos (same field numbers).
find_package(Protobuf REQUIRED)
set(ATTNPROF_PROTO_DIR ${CMAKE_CURRENT_SOURCE_DIR}/cpp/src/render/proto)
set(ATTNPROF_PROTO_OUT ${CMAKE_CURRENT_BINARY_DIR}/generated/attnprof_proto)
file(MAKE_DIRECTORY ${ATTNPROF_PROTO_OUT})
add_custom_command(
  OUTPUT ${ATTNPROF_PROTO_OUT}/tensorboard_event.pb.cc ${ATTNPROF_PROTO_OUT}/tensorboard_event.pb.h
  COMMAND protobuf::protoc --cpp_out=${ATTNPROF_PROTO_OUT} -I ${ATTNPROF_PROTO_DIR}
          ${ATTNPROF_PROTO_DIR}/tensorboard_event.proto
  DEPENDS ${ATTNPROF_PROTO_DIR}/tensorboard_event.proto protobuf::protoc
  COMMENT "protoc tensorboard_event.proto"
  VERBATIM)
# Generated code is compiled without our -Werror warning set.
add_library(attnprof_tb_proto STATIC ${ATTNPROF_PROTO_OUT}/tensorboard_event.pb.cc)
target_include_directories(attnprof_tb_proto PUBLIC ${ATTNPROF_PROTO_OUT})
target_link_libraries(attnprof_tb_proto PUBLIC protobuf::libprotobuf-lite)
target_link_libraries(attnprof_render PRIVATE attnprof_tb_proto)
