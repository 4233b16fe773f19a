# cmake -P: writes `kgen list --cmake` to OUT (-DKGEN=kgen -DOUT=file).
execute_process(COMMAND ${KGEN} list --cmake OUTPUT_FILE ${OUT}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "${KGEN} list --cmake failed")
endif()
