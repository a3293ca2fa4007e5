# The HTML dashboard's stylesheet and script (cpp/src/render/dashboard/), embedded in the render
# stage at build time; included by CMakeLists.txt.
#
# The page carries one <style> and one <script>: kDashboardCss and kDashboardScript
# (render/html_assets.h), which cmake/embed_text.cmake defines in generated sources from these
# files, regenerated when one changes. The script is one function: prelude.js opens it (the view
# model, colours, element helpers), format.js spells numbers by the rules the page's data carries
# (text_format.h), page.js lays out the sections and closes it, and
# every file between them is a list of declarations it shares (helpers before their users), so
# each of those parses on its own too.
set(ATTNPROF_DASHBOARD_DIR ${CMAKE_CURRENT_SOURCE_DIR}/cpp/src/render/dashboard)
set(ATTNPROF_DASHBOARD_CSS style.css)
set(ATTNPROF_DASHBOARD_JS
    prelude.js format.js widgets.js charts.js summary.js activation_map.js run_tables.js runs.js xy_chart.js
    model_graph.js roofline.js spread.js scaling.js heads.js steps.js whatif.js diff.js ranks.js page.js)
set(ATTNPROF_DASHBOARD_OUT ${CMAKE_CURRENT_BINARY_DIR}/generated/dashboard)

# Adds the generated definition of `symbol` (the files joined, in order) to the render stage;
# the joined text is written beside it as `text_name`.
function(attnprof_embed_dashboard symbol text_name)
  list(TRANSFORM ARGN PREPEND ${ATTNPROF_DASHBOARD_DIR}/ OUTPUT_VARIABLE inputs)
  list(JOIN inputs "|" inputs_arg)
  set(cpp ${ATTNPROF_DASHBOARD_OUT}/${symbol}.cpp)
  add_custom_command(
    OUTPUT ${cpp} ${ATTNPROF_DASHBOARD_OUT}/${text_name}
    COMMAND ${CMAKE_COMMAND} -DINPUTS=${inputs_arg} -DSYMBOL=${symbol} -DHEADER=render/html_assets.h
            -DNAMESPACE=attnprof::render -DOUTPUT_CPP=${cpp} -DOUTPUT_TEXT=${ATTNPROF_DASHBOARD_OUT}/${text_name}
            -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_text.cmake
    DEPENDS ${inputs} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_text.cmake
    COMMENT "embedding the dashboard's ${text_name}"
    VERBATIM)
  target_sources(attnprof_render PRIVATE ${cpp})
endfunction()

file(MAKE_DIRECTORY ${ATTNPROF_DASHBOARD_OUT})
attnprof_embed_dashboard(kDashboardCss dashboard.css ${ATTNPROF_DASHBOARD_CSS})
attnprof_embed_dashboard(kDashboardScript dashboard.js ${ATTNPROF_DASHBOARD_JS})

# Tests: the script parses (node --check), as the page carries it and file by file; and no C++
# string literal under cpp/ holds script or style again (clang's lexer finds the literals).
if(ATTNPROF_BUILD_TESTS)
  enable_testing()
  find_program(ATTNPROF_NODE node)
  find_program(ATTNPROF_CLANG NAMES clang clang-14)
  if(NOT ATTNPROF_NODE)
    message(WARNING "node not found: the dashboard script tests will fail (Debian package nodejs)")
  endif()
  add_test(NAME dashboard_script_parses COMMAND ${ATTNPROF_NODE} --check ${ATTNPROF_DASHBOARD_OUT}/dashboard.js)
  set(inner_files ${ATTNPROF_DASHBOARD_JS})
  list(POP_FRONT inner_files)
  list(POP_BACK inner_files)
  foreach(js IN LISTS inner_files)
    add_test(NAME dashboard_script_parses:${js} COMMAND ${ATTNPROF_NODE} --check ${ATTNPROF_DASHBOARD_DIR}/${js})
  endforeach()
  set(inline_check ${CMAKE_CURRENT_SOURCE_DIR}/cpp/tests/render/inline_web_code_check.py)
  add_test(NAME cxx_string_literals_hold_no_script_or_style
           COMMAND ${Python3_EXECUTABLE} ${inline_check} --clang ${ATTNPROF_CLANG} --root ${CMAKE_CURRENT_SOURCE_DIR}/cpp)
  add_test(NAME inline_web_code_check_finds_planted_script_and_style
           COMMAND ${Python3_EXECUTABLE} ${inline_check} --clang ${ATTNPROF_CLANG} --self-test)
endif()
