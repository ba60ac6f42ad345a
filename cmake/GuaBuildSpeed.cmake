# SPDX-License-Identifier: Apache-2.0
# Build speed on small machines: unity batches per source directory (GUA_UNITY_BUILD, on in the
# Makefile's builds). docs/PERFORMANCE.md ("Build time") has the measurements. In a batch, the
# files of one directory share a translation unit, so file-local names (anonymous namespaces,
# static functions) must differ between them: tests keep their helpers in a namespace named
# after the file.
option(GUA_UNITY_BUILD "Compile each source directory as a few unity batches" OFF)
set(GUA_UNITY_MAX_FILES 24 CACHE STRING "Most source files in one unity batch")

# Groups the sources of `target` by directory into batches of at most GUA_UNITY_MAX_FILES files
# (a directory of n files becomes ceil(n / max) batches of even size), when GUA_UNITY_BUILD is on.
# Files listed after SEPARATE, and generated files, stay single translation units.
function(gua_unity_batches target)
    if(NOT GUA_UNITY_BUILD)
        return()
    endif()
    cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SEPARATE")
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    set(dirs "")
    foreach(source IN LISTS sources)
        if(NOT source MATCHES "\\.cpp$")
            continue()
        endif()
        cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY ${source_dir} OUTPUT_VARIABLE path)
        cmake_path(IS_PREFIX PROJECT_SOURCE_DIR "${path}" in_tree)
        if(path IN_LIST arg_SEPARATE OR NOT in_tree)
            set_source_files_properties(${source} TARGET_DIRECTORY ${target}
                PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
            continue()
        endif()
        cmake_path(GET path PARENT_PATH dir)
        cmake_path(RELATIVE_PATH dir BASE_DIRECTORY ${PROJECT_SOURCE_DIR})
        string(MAKE_C_IDENTIFIER "${dir}" key)
        list(APPEND dirs ${key})
        list(APPEND files_${key} ${source})
    endforeach()
    list(REMOVE_DUPLICATES dirs)
    foreach(key IN LISTS dirs)
        list(LENGTH files_${key} count)
        math(EXPR batches "(${count} + ${GUA_UNITY_MAX_FILES} - 1) / ${GUA_UNITY_MAX_FILES}")
        set(index 0)
        foreach(source IN LISTS files_${key})
            math(EXPR batch "${index} * ${batches} / ${count}")
            set_source_files_properties(${source} TARGET_DIRECTORY ${target}
                PROPERTIES UNITY_GROUP "${key}_${batch}")
            math(EXPR index "${index} + 1")
        endforeach()
    endforeach()
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
endfunction()
