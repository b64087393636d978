// Sorts the table #{{ table }} by the clicked column: numbers as numbers, the rest as
// text; a second click reverses the order.
document.querySelectorAll("#{{ table }} th").forEach(function (heading, column) {
  heading.addEventListener("click", function () {
    var body = document.querySelector("#{{ table }} tbody");
    var rows = Array.prototype.slice.call(body.rows);
    var ascending = heading.dataset.order !== "ascending";
    heading.dataset.order = ascending ? "ascending" : "descending";
    rows.sort(function (a, b) {
      var x = a.cells[column].textContent, y = b.cells[column].textContent;
      var order = (x !== "" && y !== "" && !isNaN(x) && !isNaN(y)) ? x - y : x.localeCompare(y, undefined, {numeric: true});
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
