# cmake -P: makes a prelinked runtime object private but for the C API.
#   -DIN=obj -DOUT=obj -DNM=nm -DOBJCOPY=objcopy
# Every defined global, weak or unique symbol not named kgen_* is renamed
# __kgenrt_<name> (objcopy cannot make a unique symbol local, and a C++
# program's own static libstdc++ defines the same ones), then made local.
execute_process(COMMAND ${NM} --defined-only ${IN}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "${NM} failed on ${IN}")
endif()
string(REPLACE "\n" ";" symbols "${symbols}")
set(map "")
foreach(line IN LISTS symbols)
  if(line MATCHES "^[0-9a-f]* ([A-Zuvw]) (.+)$")
    set(name "${CMAKE_MATCH_2}")
    if(NOT name MATCHES "^kgen_" AND NOT name MATCHES "^__kgenrt_")
      string(APPEND map "${name} __kgenrt_${name}\n")
    endif()
  endif()
endforeach()
file(WRITE ${OUT}.map "${map}")
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT}.map --wildcard
                        --keep-global-symbol=kgen_* -R .group ${IN} ${OUT}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "${OBJCOPY} failed on ${IN}")
endif()
