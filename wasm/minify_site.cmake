# Minifies the assembled site's JavaScript in place: the page's modules (*.js)
# and the glue of the page's WebAssembly module (trainsim_web.mjs). Each file
# is transformed on its own (no bundling), so every module keeps its imports
# and exports. A file esbuild cannot parse stops the build.
# Usage: cmake -DSITE_DIR=... -DESBUILD=... -P minify_site.cmake
file(GLOB_RECURSE scripts "${SITE_DIR}/*.js")
function(minify)  # minify(FILE... [--out-extension:.js=.mjs])
  execute_process(
    COMMAND "${ESBUILD}" ${ARGN} --minify --log-level=warning --allow-overwrite
            "--outbase=${SITE_DIR}" "--outdir=${SITE_DIR}"
    RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "esbuild could not minify the site's JavaScript (${status})")
  endif()
endfunction()
minify(${scripts})
# esbuild names its outputs .js unless told to keep the glue's .mjs.
minify("${SITE_DIR}/trainsim_web.mjs" --out-extension:.js=.mjs)
